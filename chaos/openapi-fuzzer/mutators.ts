import fc from 'fast-check';
import type { Body, Draft } from './draft.ts';
import { hostileValue, oddId, sample } from './hostile-value.ts';
import { isObject, jsonText, obj, withEntry, type Json } from './json-text.ts';
import { percentEncode } from './to-wire.ts';
import type { Gen } from './valid-value.ts';

export interface Mutator {
  name: string;
  weight: number;
  applies(d: Draft): boolean;
  apply(d: Draft, g: Gen): void;
}

const hasJsonBody = (d: Draft) => d.body.kind === 'json' && isObject(d.body.value);

export const MUTATORS: Mutator[] = [
  {
    name: 'field',
    weight: 30,
    applies: hasJsonBody,
    apply(d, g) {
      const body = d.body as { kind: 'json'; value: Json };
      const schema = d.op?.body ?? {};
      const names = [...new Set([...Object.keys(body.value), ...Object.keys(propertiesOf(schema, body.value))])];
      if (!names.length) return extraField(d, g);
      const name = g.rng.pick(names);
      const hostile = hostileValue(g, propertiesOf(schema, body.value)[name] ?? {}, name);
      body.value = withEntry(body.value, name, hostile.value);
      d.labels.push(`${name}: ${hostile.label}`);
    },
  },
  {
    name: 'missing',
    weight: 8,
    applies: hasJsonBody,
    apply(d, g) {
      const body = d.body as { kind: 'json'; value: Json };
      const names = Object.keys(body.value);
      if (!names.length) return extraField(d, g);
      if (g.rng.chance(0.2)) {
        body.value = Object.create(null);
        d.labels.push('every field missing');
        return;
      }
      const name = g.rng.pick(names);
      const next = Object.assign(Object.create(null), body.value);
      delete next[name];
      body.value = next;
      d.labels.push(`${name} missing`);
    },
  },
  { name: 'extra', weight: 8, applies: hasJsonBody, apply: (d, g) => extraField(d, g) },
  {
    name: 'duplicate key',
    weight: 3,
    applies: hasJsonBody,
    apply(d, g) {
      const body = d.body as { kind: 'json'; value: Json };
      const names = Object.keys(body.value);
      const name = names.length ? g.rng.pick(names) : 'amount';
      const hostile = hostileValue(g, {});
      const text = jsonText(body.value);
      const dup = `${JSON.stringify(name)}:${jsonText(hostile.value)}`;
      d.body = { kind: 'raw', text: text === '{}' ? `{${dup},${dup}}` : g.rng.chance(0.5) ? text.replace(/}$/, `,${dup}}`) : text.replace(/^{/, `{${dup},`) };
      d.labels.push(`${name} given twice, once as ${hostile.label}`);
    },
  },
  {
    name: 'body shape',
    weight: 8,
    applies: (d) => d.op?.body !== undefined,
    apply(d, g) {
      const valid = d.body.kind === 'json' ? d.body.value : {};
      const [label, text] = g.rng.pick<[string, () => string]>([
        ['null', () => 'null'],
        ['an empty array', () => '[]'],
        ['an array holding the body', () => `[${jsonText(valid)}]`],
        ['a string', () => JSON.stringify(jsonText(valid))],
        ['a number', () => '42'],
        ['true', () => 'true'],
        ['an empty object', () => '{}'],
        ['an empty body', () => ''],
        ['whitespace', () => ' \n\t '],
        ['a byte-order mark then the body', () => `\ufeff${jsonText(valid)}`],
        ['the body nested 5 000 arrays deep', () => `${'['.repeat(5_000)}${jsonText(valid)}${']'.repeat(5_000)}`],
        ['an object nested 3 000 deep', () => `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`],
        ['a 150 kB body', () => jsonText(withEntry(valid as Json, 'padding', 'x'.repeat(150_000)))],
        ['a 99 kB body', () => jsonText(withEntry(valid as Json, 'padding', 'x'.repeat(99_000)))],
        ['a body of 20 000 fields', () => `{${Array.from({ length: 20_000 }, (_, i) => `"f${i}":${i}`).join(',')}}`],
      ]);
      d.body = { kind: 'raw', text: text() };
      d.labels.push(`body: ${label}`);
    },
  },
  {
    name: 'truncated',
    weight: 5,
    applies: (d) => d.body.kind !== 'none',
    apply(d, g) {
      const text = d.body.kind === 'raw' ? d.body.text : jsonText((d.body as { value: unknown }).value);
      if (text.length < 2) return;
      const cut = 1 + g.rng.below(text.length - 1);
      d.body = { kind: 'raw', text: text.slice(0, cut) };
      d.labels.push(`body truncated to ${cut} of ${text.length} characters`);
    },
  },
  {
    name: 'not json',
    weight: 5,
    applies: (d) => d.op?.body !== undefined,
    apply(d, g) {
      const [label, text] = g.rng.pick<[string, () => string]>([
        ['form-encoded text', () => 'amount=1000&currency=GHS&__proto__[admin]=1'],
        ['XML', () => '<?xml version="1.0"?><charge><amount>1000</amount></charge>'],
        ['a JavaScript object literal', () => "{amount: 1000, currency: 'GHS'}"],
        ['JSON with a trailing comma', () => '{"amount": 1000,}'],
        ['JSON with single quotes', () => "{'amount': 1000}"],
        ['JSON with a comment', () => '{"amount": 1000 /* pesewas */}'],
        ['NaN', () => '{"amount": NaN}'],
        ['Infinity', () => '{"amount": Infinity}'],
        ['random unicode', () => sample(g.rng, fc.string({ unit: 'grapheme', maxLength: 200 }))],
        ['control characters', () => '\u0000\u0001\u0002{"a":1}'],
        ['a lone surrogate', () => '{"amount":"\ud800"}'],
        ['an escaped lone surrogate', () => '{"amount":"\\ud800"}'],
      ]);
      d.body = { kind: 'raw', text: text() };
      d.labels.push(`body: ${label}`);
    },
  },
  {
    name: 'content type',
    weight: 6,
    applies: (d) => d.body.kind !== 'none' || d.op?.body !== undefined,
    apply(d, g) {
      if (d.body.kind === 'none') d.body = { kind: 'json', value: {} };
      const choice = g.rng.pick<[string, string | null, ((d: Draft) => void)?]>([
        ['none', null],
        ['text/plain', 'text/plain'],
        ['form-urlencoded with a form body', 'application/x-www-form-urlencoded', (x) => (x.body = { kind: 'raw', text: formText(x.body) })],
        ['form-urlencoded with the JSON body', 'application/x-www-form-urlencoded'],
        ['multipart', 'multipart/form-data; boundary=XyZ', (x) => (x.body = { kind: 'raw', text: '--XyZ\r\nContent-Disposition: form-data; name="amount"\r\n\r\n1000\r\n--XyZ--\r\n' })],
        ['application/xml', 'application/xml'],
        ['charset utf-16', 'application/json; charset=utf-16'],
        ['charset latin1', 'application/json; charset=latin1'],
        ['an unknown charset', 'application/json; charset=klingon'],
        ['application/vnd.api+json', 'application/vnd.api+json'],
        ['a garbage content type', ';;;=/'],
        ['a non-ASCII content type', 'application/jsön'],
        ['a 4 kB content type', `application/json; x=${'a'.repeat(4_000)}`],
      ]);
      d.contentType = choice[1];
      choice[2]?.(d);
      d.labels.push(`content-type: ${choice[0]}`);
    },
  },
  {
    name: 'content encoding',
    weight: 2,
    applies: () => true,
    apply(d, g) {
      const [label, value] = g.rng.pick<[string, string]>([
        ['gzip that is not gzip', 'gzip'],
        ['deflate that is not deflate', 'deflate'],
        ['br', 'br'],
        ['an unknown encoding', 'x-unknown'],
        ['identity', 'identity'],
        ['gzip twice', 'gzip, gzip'],
      ]);
      d.headers['content-encoding'] = value;
      if (d.body.kind === 'none') d.body = { kind: 'raw', text: 'this is not compressed' };
      d.labels.push(`content-encoding: ${label}`);
    },
  },
  {
    name: 'path id',
    weight: 12,
    applies: (d) => Object.keys(d.pathParams).length > 0,
    apply(d, g) {
      const name = g.rng.pick(Object.keys(d.pathParams));
      if (g.rng.chance(0.15)) {
        const [label, raw] = g.rng.pick<[string, string]>([
          ['a lone %', '%'],
          ['%zz', '%zz'],
          ['a truncated UTF-8 escape', '%E0%A4%A'],
          ['an overlong UTF-8 slash', '%C0%AF'],
          ['an encoded lone surrogate', '%ED%A0%80'],
        ]);
        d.pathParams[name] = { value: raw, raw: true };
        d.labels.push(`path ${name}: ${label}`);
        return;
      }
      const odd = oddId(g, d.pathParams[name]!.value);
      d.pathParams[name] = { value: odd.value };
      d.labels.push(`path ${name}: ${odd.label}`);
    },
  },
  {
    name: 'query',
    weight: 10,
    applies: (d) => d.method === 'GET',
    apply(d, g) {
      const params = d.op?.queryParams ?? [];
      const name =
        params.length && g.rng.chance(0.8)
          ? g.rng.pick(params).name
          : g.rng.pick(['limit', 'offset', '__proto__', 'constructor', 'type[]', 'page_size[]', 'cursor[a]', 'status[$ne]', 'x'.repeat(500)]);
      const [label, apply] = g.rng.pick<[string, () => void]>([
        ['garbage', () => setQuery(d, name, queryGarbage(g, name))],
        ['repeated', () => d.query.push([name, queryGarbage(g, name)], [name, queryGarbage(g, name)])],
        ['as an array (name[]=)', () => d.query.push([`${name}[]`, '1'])],
        ['nested (name[a]=)', () => d.query.push([`${name}[a]`, '1'])],
        ['empty', () => setQuery(d, name, '')],
        ['without a value', () => (d.rawQuery = percentEncode(name))],
        ['undecodable', () => (d.rawQuery = `${percentEncode(name)}=${g.rng.pick(['%', '%zz', '%E0%A4%A', '%ED%A0%80'])}`)],
        ['a lone &', () => (d.rawQuery = '&&=&')],
      ]);
      apply();
      d.labels.push(`query ${name.slice(0, 40)}: ${label}`);
    },
  },
  {
    name: 'idempotency key',
    weight: 8,
    applies: (d) => d.op?.idempotent === true,
    apply(d, g) {
      const reuse = g.state.idempotent.filter((k) => k.operationId === d.op!.operationId);
      const options: [string, () => void][] = [
        ['missing', () => (d.idempotencyKey = null)],
        ['empty', () => (d.idempotencyKey = '')],
        ['256 characters', () => (d.idempotencyKey = 'k'.repeat(256))],
        ['4 000 characters', () => (d.idempotencyKey = 'k'.repeat(4_000))],
        ['non-ASCII', () => (d.idempotencyKey = `clé-${g.rng.below(1e9)}`)],
        ['an emoji', () => (d.idempotencyKey = `🔑-${g.rng.below(1e9)}`)],
        ['with a space', () => (d.idempotencyKey = `my key ${g.rng.below(1e9)}`)],
        ['with a tab', () => (d.idempotencyKey = `my\tkey`)],
        ['sent twice', () => (d.idempotencyKey = [`a-${g.rng.below(1e9)}`, `b-${g.rng.below(1e9)}`])],
        ['__proto__', () => (d.idempotencyKey = '__proto__')],
      ];
      if (reuse.length) {
        const old = g.rng.pick(reuse);
        options.push(
          ['reused with this request', () => (d.idempotencyKey = old.key)],
          [
            'reused with its first request, byte for byte',
            () => {
              d.idempotencyKey = old.key;
              d.body = old.body === undefined ? { kind: 'none' } : { kind: 'raw', text: old.body };
            },
          ],
        );
      }
      const elsewhere = g.state.idempotent.filter((k) => k.operationId !== d.op!.operationId);
      if (elsewhere.length) {
        const old = g.rng.pick(elsewhere);
        options.push([`first used on ${old.operationId}`, () => (d.idempotencyKey = old.key)]);
      }
      const [label, apply] = g.rng.pick(options);
      apply();
      d.labels.push(`Idempotency-Key ${label}`);
    },
  },
  {
    name: 'authorization',
    weight: 5,
    applies: () => true,
    apply(d, g) {
      const harvested = g.state.identities.slice(1);
      const options: [string, () => void][] = [
        [
          'missing',
          () => {
            d.identity = null;
            d.authorization = null;
          },
        ],
        ['Basic', () => (d.authorization = 'Basic dXNlcjpwYXNz')],
        ['Bearer with no key', () => (d.authorization = 'Bearer ')],
        ['lower-case bearer', () => (d.authorization = `bearer ${d.identity?.key ?? ''}`)],
        ['a key of the wrong shape', () => (d.authorization = 'Bearer sk_test_short')],
        ['an unknown key', () => (d.authorization = `Bearer sk_test_${'0'.repeat(28)}`)],
        ['an unknown live key', () => (d.authorization = `Bearer sk_live_${'0'.repeat(28)}`)],
        ['a 6 kB key', () => (d.authorization = `Bearer sk_test_${'a'.repeat(6_000)}`)],
        ['a non-ASCII key', () => (d.authorization = 'Bearer sk_test_ключ')],
        ['the key twice', () => (d.authorization = `Bearer ${d.identity?.key} ${d.identity?.key}`)],
      ];
      if (harvested.length) options.push(['a harvested key', () => (d.identity = g.rng.pick(harvested))], ['a harvested key', () => (d.identity = g.rng.pick(harvested))]);
      const [label, apply] = g.rng.pick(options);
      apply();
      d.labels.push(`Authorization: ${label === 'a harvested key' ? d.identity!.label : label}`);
    },
  },
  {
    name: 'method',
    weight: 3,
    applies: () => true,
    apply(d, g) {
      d.method = g.rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].filter((m) => m !== d.method));
      d.documented = false;
      d.labels.push(`method ${d.method}`);
    },
  },
  {
    name: 'unknown path',
    weight: 2,
    applies: () => true,
    apply(d, g) {
      d.path = g.rng.pick([
        '/api/v1',
        '/api/v1/',
        '/api/v2/charges',
        '/api/v1/charges/',
        '/api/v1//charges',
        '/api/v1/CHARGES',
        '/api/v1/charges/a/b',
        '/api/v1/__proto__',
        '/api/v1/constructor',
        '/api/v1/%2e%2e/openapi.json',
        '/api/v1/wallet.json',
        '/%F0%9F%92%B8',
      ]);
      d.pathParams = {};
      d.documented = false;
      d.labels.push(`path ${d.path}`);
    },
  },
  {
    name: 'body on a body-less operation',
    weight: 3,
    applies: (d) => d.op?.body === undefined && d.body.kind === 'none',
    apply(d, g) {
      const [label, text] = g.rng.pick<[string, string]>([
        ['malformed JSON', '{"amount":'],
        ['a JSON object', '{"amount":1000}'],
        ['__proto__', '{"__proto__":{"admin":true}}'],
        ['a 150 kB body', JSON.stringify({ padding: 'x'.repeat(150_000) })],
      ]);
      d.body = { kind: 'raw', text };
      d.contentType = 'application/json';
      d.labels.push(`a body on ${d.method}: ${label}`);
    },
  },
  {
    name: 'header junk',
    weight: 2,
    applies: () => true,
    apply(d, g) {
      const [label, name, value] = g.rng.pick<[string, string, string]>([
        ['a 4 kB X-Request-Id', 'x-request-id', 'r'.repeat(4_000)],
        ['X-HTTP-Method-Override', 'x-http-method-override', 'DELETE'],
        ['X-Forwarded-For garbage', 'x-forwarded-for', '::1, 999.999.999.999, ü'],
        ['Accept: text/html only', 'accept', 'text/html'],
        ['Accept-Charset: utf-16', 'accept-charset', 'utf-16'],
        ['Expect: 100-continue', 'expect', '100-continue'],
      ]);
      d.headers[name] = value;
      d.labels.push(label);
    },
  },
];

function extraField(d: Draft, g: Gen): void {
  const body = d.body as { kind: 'json'; value: Json };
  const [name, value, label] = g.rng.pick<[string, unknown, string]>([
    ['__proto__', obj({ admin: true, status: 'success' }), '__proto__ holding an object'],
    ['__proto__', null, '__proto__: null'],
    ['constructor', obj({ prototype: obj({ admin: true }) }), 'constructor.prototype'],
    ['prototype', obj({ admin: true }), 'prototype'],
    ['toString', 'boom', 'toString'],
    ['hasOwnProperty', 1, 'hasOwnProperty'],
    ['surprise', 1, 'an unknown field'],
    ['id', 'chg_0000000000aaaaaaaaaa', 'an id'],
    ['status', 'success', 'status: success'],
    ['livemode', true, 'livemode'],
    ['merchant_id', 'mch_other', 'merchant_id'],
    ['', 1, 'an empty name'],
    ['💸', 1, 'an emoji name'],
    ['x'.repeat(5_000), 1, 'a 5 000-character name'],
  ]);
  if (g.rng.chance(0.2) && Object.keys(body.value).length) {
    // One level down: inside an object or array a field holds.
    const parent = g.rng.pick(Object.keys(body.value));
    body.value = withEntry(body.value, parent, withEntry(obj({}), name, value));
    d.labels.push(`${parent} replaced by an object holding ${label}`);
    return;
  }
  body.value = withEntry(body.value, name, value);
  d.labels.push(`extra field ${label}`);
}

function setQuery(d: Draft, name: string, value: string): void {
  d.query = d.query.filter(([k]) => k !== name);
  d.query.push([name, value]);
}

function queryGarbage(g: Gen, name: string): string {
  if (name === 'cursor' && g.state.cursors.length && g.rng.chance(0.3)) {
    const cursor = g.rng.pick(g.state.cursors);
    return g.rng.pick([
      `${cursor}x`,
      cursor.slice(1),
      cursor.toUpperCase(),
      Buffer.from('v1:-1').toString('base64url'),
      Buffer.from('v1:99999999999999999999').toString('base64url'),
      Buffer.from('v2:1').toString('base64url'),
    ]);
  }
  return g.rng.pick([
    '1e3',
    '-1',
    '0',
    '1.5',
    '0x10',
    ' 5',
    '5 ',
    '٥',
    '1_000',
    'NaN',
    'Infinity',
    '9'.repeat(400),
    '101',
    '100',
    '1',
    'null',
    'true',
    '[]',
    '{}',
    '__proto__',
    "' OR 1=1 --",
    '💸',
    'a'.repeat(5_000),
    '\u0000',
    '%',
    'v1:1',
    'djE6MQ',
    'djE6LTE',
    '2026-13-45T25:61:61Z',
    '2026-01-01',
    '1970-01-01T00:00:00Z',
    '+275760-09-13T00:00:00Z',
  ]);
}

function formText(body: Body): string {
  if (body.kind !== 'json' || !isObject(body.value)) return 'a=1';
  return Object.entries(body.value as Json)
    .map(([k, v]) => `${percentEncode(k)}=${percentEncode(typeof v === 'string' ? v : jsonText(v))}`)
    .join('&');
}

/** The properties a body schema allows, from the oneOf branch that fits the body best. */
function propertiesOf(schema: Json, body: Json): Record<string, Json> {
  const branches: Json[] = schema.oneOf ?? schema.anyOf ?? [schema];
  const fits = branches.find((b) => Object.entries<Json>(b.properties ?? {}).every(([k, s]) => !('const' in s) || !(k in body) || body[k] === s.const));
  return (fits ?? branches[0])?.properties ?? {};
}
