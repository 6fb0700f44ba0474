import fc from 'fast-check';
import type { Rng } from '../seeded-random.ts';
import { obj, RawJson, type Json } from './json-text.ts';
import { validValue, type Gen } from './valid-value.ts';

const HOSTILE_STRINGS: [string, string][] = [
  ['an empty string', ''],
  ['a space', ' '],
  ['"null"', 'null'],
  ['"undefined"', 'undefined'],
  ['"NaN"', 'NaN'],
  ['__proto__', '__proto__'],
  ['constructor', 'constructor'],
  ['prototype', 'prototype'],
  ['toString', 'toString'],
  ['SQL', "' OR '1'='1' --"],
  ['HTML', '<script>alert(1)</script>'],
  ['a template', '${7*7}{{7*7}}'],
  ['a path', '../../../etc/passwd'],
  ['a NUL byte', 'a\u0000b'],
  ['CR LF', 'a\r\nX-Injected: 1'],
  ['a right-to-left override', 'abc\u202edef'],
  ['zero-width characters', '\u200b\u200c\u200d\ufeff'],
  ['Twi', 'Ɛyɛ adeɛ a ɛyɛ fɛ'],
  ['emoji', '🇬🇭💸🔥👩🏾‍💻'],
  ['a lone surrogate', '\ud800'],
  ['Arabic-Indic digits', '٠٥٥١٢٣٤٩٨٧'],
  ['fullwidth digits', '０５５１２３４９８７'],
  ['a number as text', '1000'],
  ['a decimal as text', '10.50'],
  ['scientific notation as text', '1e3'],
];

/** A value that breaks `schema`: wrong type, out of range, odd text, or a structure for a scalar. */
export function hostileValue(g: Gen, schema: Json, name = ''): { value: unknown; label: string } {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const numeric = type === 'integer' || type === 'number';
  const pools: (() => { value: unknown; label: string })[] = [
    () => {
      const [label, value] = g.rng.pick(HOSTILE_STRINGS);
      return { value, label };
    },
    () =>
      g.rng.pick([
        { value: null, label: 'null' },
        { value: true, label: 'true' },
        { value: false, label: 'false' },
        { value: [], label: 'an empty array' },
        { value: obj({}), label: 'an empty object' },
        { value: [validValue(g, schema, name, undefined)], label: 'a valid value in an array' },
        { value: obj({ value: validValue(g, schema, name, undefined) }), label: 'a valid value in an object' },
        { value: obj({ __proto__: obj({ admin: true }) }), label: 'an object holding __proto__' },
        { value: obj({ constructor: obj({ prototype: obj({ admin: true }) }) }), label: 'an object holding constructor.prototype' },
      ]),
    () =>
      g.rng.pick([
        { value: 0, label: '0' },
        { value: -1, label: '-1' },
        { value: -1_000_000, label: '-1 000 000' },
        { value: 1.5, label: '1.5' },
        { value: 0.001, label: '0.001' },
        { value: 1e21, label: '1e21' },
        { value: -1e21, label: '-1e21' },
        { value: 2 ** 31, label: '2^31' },
        { value: Number.MAX_SAFE_INTEGER + 2, label: 'MAX_SAFE_INTEGER + 2' },
        { value: Number.MAX_VALUE, label: 'Number.MAX_VALUE' },
        { value: Number.MIN_VALUE, label: 'Number.MIN_VALUE' },
        { value: new RawJson('-0'), label: '-0' },
        { value: new RawJson('1e400'), label: '1e400' },
        { value: new RawJson('-1e400'), label: '-1e400' },
        { value: new RawJson('9007199254740993'), label: '9007199254740993 written out' },
        { value: new RawJson('1.0'), label: '1.0' },
        { value: new RawJson('100e-2'), label: '100e-2' },
        { value: new RawJson(`1${'0'.repeat(400)}`), label: 'a 401-digit integer' },
        { value: new RawJson(`0.${'0'.repeat(400)}1`), label: 'a 400-decimal fraction' },
      ]),
    () => ({ value: sample(g.rng, fc.double()), label: 'an arbitrary double' }),
    () => ({ value: sample(g.rng, fc.integer({ min: -(2 ** 53), max: 2 ** 53 })), label: 'an arbitrary integer' }),
    () => ({ value: sample(g.rng, fc.string({ unit: 'grapheme', maxLength: 64 })), label: 'arbitrary unicode' }),
    () => ({ value: sample(g.rng, fc.string({ unit: 'binary', maxLength: 64 })), label: 'arbitrary code points' }),
    () => ({ value: sample(g.rng, fc.jsonValue({ maxDepth: 3 })), label: 'arbitrary JSON' }),
    () => ({ value: 'x'.repeat(g.rng.pick([101, 256, 1_000, 10_000, 90_000])), label: 'a very long string' }),
    () => ({ value: Array.from({ length: g.rng.pick([100, 10_000]) }, () => validValue(g, schema.items ?? {}, '', undefined)), label: 'a long array' }),
    () => ({ value: `${'['.repeat(2_000)}${']'.repeat(2_000)}`, label: 'brackets as text' }),
    () => ({ value: new RawJson(`${'['.repeat(2_000)}${']'.repeat(2_000)}`), label: 'an array nested 2 000 deep' }),
  ];
  if (numeric) {
    const lo = schema.exclusiveMinimum ?? schema.minimum;
    const hi = schema.exclusiveMaximum ?? schema.maximum;
    pools.push(
      () => ({ value: typeof lo === 'number' ? lo - (schema.exclusiveMinimum !== undefined ? 0 : 1) : -1, label: 'just below the minimum' }),
      () => ({ value: typeof hi === 'number' ? hi + (schema.exclusiveMaximum !== undefined ? 0 : 1) : 1e16, label: 'just above the maximum' }),
      () => ({ value: String(validValue(g, schema, name, undefined)), label: 'a valid number as a string' }),
      () => ({ value: Number(validValue(g, schema, name, undefined)) + 0.5, label: 'a valid number plus 0.5' }),
    );
  }
  if (type === 'string' && typeof schema.maxLength === 'number') pools.push(() => ({ value: 'x'.repeat(schema.maxLength + 1), label: 'one character too long' }));
  if (Array.isArray(schema.enum)) {
    pools.push(
      () => ({ value: String(g.rng.pick(schema.enum)).toUpperCase(), label: 'an upper-case enum value' }),
      () => ({ value: ` ${g.rng.pick(schema.enum)}`, label: 'an enum value with a leading space' }),
    );
  }
  return g.rng.pick(pools)();
}

export function oddId(g: Gen, valid: string): { value: string; label: string } {
  const pick = g.rng.pick<[string, () => string]>([
    ['a wrong prefix', () => valid.replace(/^[a-z]+_/, 'qt_')],
    ['upper case', () => valid.toUpperCase()],
    ['one character more', () => `${valid}a`],
    ['one character less', () => valid.slice(0, -1)],
    ['no prefix', () => valid.replace(/^[a-z]+_/, '')],
    ['an emoji', () => `${valid}💸`],
    ['Twi', () => 'Ɛyɛ-adeɛ'],
    ['a NUL byte', () => `${valid}\u0000`],
    ['a slash', () => `${valid}/x`],
    ['a dot', () => '.'],
    ['dot dot', () => '..'],
    ['a space', () => ' '],
    ['SQL', () => `${valid}' OR '1'='1`],
    ['__proto__', () => '__proto__'],
    ['constructor', () => 'constructor'],
    ['toString', () => 'toString'],
    ['4 000 characters', () => `${valid}${'a'.repeat(4_000)}`],
    ['a number', () => '1e3'],
    ['a lone surrogate', () => '\ud800'],
    ['arbitrary unicode', () => sample(g.rng, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }))],
  ]);
  let value = pick[1]();
  // '' has no route; GET /api/v1/events/stream is a server-sent event stream, served before
  // /events/{id}, that never ends: it would hang the fuzzer, not test the route.
  if (value === '' || value === 'stream') value = 'x';
  return { value, label: pick[0] };
}

export function sample<T>(rng: Rng, arbitrary: fc.Arbitrary<T>): T {
  return fc.sample(arbitrary, { seed: rng.below(2 ** 31), numRuns: 1 })[0]!;
}
