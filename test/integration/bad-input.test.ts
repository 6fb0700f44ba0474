// Bad input never yields a 500, always gets the spec's error envelope with a stable code (400
// validation_error naming the offending field, or the precise code for the case), and changes
// nothing: balances, the transactions list, the trial balance, the clock and every table stay put.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../src/kernel/sign-request.ts';
import { MAX_AMOUNT } from '../../src/kernel/money.ts';
import { normaliseMsisdn } from '../../src/kernel/msisdn.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

type Json = unknown;

interface Expectation {
  status: number;
  code: string;
  /** For validation_error: a field that details.fields must name (a pattern where several names are fair). */
  field?: string | RegExp;
  /** How the test name reads a pattern field. */
  fieldLabel?: string;
}

interface Case {
  name: string;
  method: 'get' | 'post';
  path: string;
  body?: Json;
  rawBody?: string;
  contentType?: string | null;
  headers?: Record<string, string | string[]>;
  /** Which key to send: the sandbox test key (default), a live key, a read-only key, a literal header, or none. */
  auth?: 'test' | 'live' | 'read-only' | 'none' | { header: string };
  /** Idempotent endpoints get a fresh key unless this says otherwise (null: send none). */
  idempotencyKey?: string | string[] | null;
  /** Signed endpoints are signed correctly unless told otherwise. */
  signature?: { omit?: true; value?: string; timestamp?: string; signBody?: string };
  expect: Expectation;
}

const IDEMPOTENT = new Set(['/api/v1/charges', '/api/v1/transfers', '/api/v1/trades']);
const SIGNED = new Set(['/api/v1/transfers', '/api/v1/trades']);

// ---------------------------------------------------------------------------------------------
// Valid requests, per endpoint: every case below breaks exactly one thing in one of them.
// ---------------------------------------------------------------------------------------------

const VALID = {
  charge: { amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
  transferMomo: { amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' },
  transferBank: { amount: 1_000, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' },
  momoName: { msisdn: '0551234987' },
  bankName: { account_number: '1000000001', bank_code: '040100' },
  fund: { amount: 1_000 },
  advance: { seconds: 1 },
  outage: { down: false },
  keys: { environment: 'test', scopes: ['read'] },
  quote: { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 },
  execute: { quote_reference: 'qt_0000000000aaaaaaaaaa', delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' },
  deposit: { trade_reference: 'trd_0000000000aaaaaaaaaa', asset_amount: 1_000_000 },
  review: { decision: 'approve' },
  stage: { stage: 'sandbox' },
  ladder: { action: 'go_live' },
  newKey: { environment: 'test', scopes: ['read'], role: 'finance', ip_allowlist: ['127.0.0.1'] },
  replay: { file: 'scenarios/failover.yaml' },
} as const satisfies Record<string, Record<string, unknown>>;

interface PostEndpoint {
  label: string;
  path: string;
  valid: Record<string, unknown>;
  /** The field an empty JSON object is first blamed on. */
  firstRequired: string;
}

const POSTS: PostEndpoint[] = [
  { label: 'POST /api/v1/charges', path: '/api/v1/charges', valid: VALID.charge, firstRequired: 'amount' },
  { label: 'POST /api/v1/transfers', path: '/api/v1/transfers', valid: VALID.transferMomo, firstRequired: 'channel' },
  { label: 'POST /api/v1/resolve/momo-name', path: '/api/v1/resolve/momo-name', valid: VALID.momoName, firstRequired: 'msisdn' },
  { label: 'POST /api/v1/resolve/bank-name', path: '/api/v1/resolve/bank-name', valid: VALID.bankName, firstRequired: 'account_number' },
  { label: 'POST /api/v1/sandbox/wallet/fund', path: '/api/v1/sandbox/wallet/fund', valid: VALID.fund, firstRequired: 'amount' },
  { label: 'POST /api/v1/sandbox/clock/advance', path: '/api/v1/sandbox/clock/advance', valid: VALID.advance, firstRequired: 'seconds' },
  { label: 'POST /api/v1/sandbox/providers/:name/outage', path: '/api/v1/sandbox/providers/mtn-momo/outage', valid: VALID.outage, firstRequired: 'down' },
  { label: 'POST /api/v1/sandbox/keys', path: '/api/v1/sandbox/keys', valid: VALID.keys, firstRequired: 'environment' },
  { label: 'POST /api/v1/trades/quote', path: '/api/v1/trades/quote', valid: VALID.quote, firstRequired: 'side' },
  { label: 'POST /api/v1/trades', path: '/api/v1/trades', valid: VALID.execute, firstRequired: 'quote_reference' },
  { label: 'POST /api/v1/sandbox/deposits', path: '/api/v1/sandbox/deposits', valid: VALID.deposit, firstRequired: 'trade_reference' },
  { label: 'POST /api/v1/sandbox/trades/:reference/review', path: '/api/v1/sandbox/trades/trd_0000000000aaaaaaaaaa/review', valid: VALID.review, firstRequired: 'decision' },
  { label: 'POST /api/v1/sandbox/merchant/trading', path: '/api/v1/sandbox/merchant/trading', valid: VALID.stage, firstRequired: 'stage' },
  { label: 'POST /api/v1/merchant/ladder', path: '/api/v1/merchant/ladder', valid: VALID.ladder, firstRequired: 'action' },
  { label: 'POST /api/v1/keys', path: '/api/v1/keys', valid: VALID.newKey, firstRequired: 'environment' },
  { label: 'POST /api/v1/sandbox/replays', path: '/api/v1/sandbox/replays', valid: VALID.replay, firstRequired: 'file' },
  // A fault on a route that does not exist: switching it on changes nothing the other cases send.
  { label: 'POST /api/v1/sandbox/faults', path: '/api/v1/sandbox/faults', valid: { profile: 'slow-responses', route: 'GET /nowhere', latency_ms: 0 }, firstRequired: 'profile' },
];

const bad = (field: string | RegExp): Expectation => ({ status: 400, code: 'validation_error', field });
/** A path segment that is not valid percent-encoding cannot be decoded into its parameter: naming the path is enough. */
const undecodablePath = (param: string): Expectation => ({ ...bad(new RegExp(`^path(\\.${param})?$`)), fieldLabel: `path or path.${param}` });
const BODY = bad('body');

/** The same breakages for every JSON endpoint: the body is not a JSON object at all. */
function bodyShapeCases(e: PostEndpoint): Case[] {
  const post = (name: string, rest: Partial<Case>, expectation: Expectation): Case => ({ name, method: 'post', path: e.path, ...rest, expect: expectation });
  const multipart = '--XyZ\r\nContent-Disposition: form-data; name="amount"\r\n\r\n1000\r\n--XyZ--\r\n';
  return [
    post('malformed JSON {"amount":', { rawBody: '{"amount":' }, BODY),
    post('JSON with a trailing comma', { rawBody: JSON.stringify(e.valid).replace(/}$/, ',}') }, BODY),
    post('a JSON array', { rawBody: '[]' }, BODY),
    post('a JSON array holding a valid body', { rawBody: JSON.stringify([e.valid]) }, BODY),
    post('a JSON string', { rawBody: '"hello"' }, BODY),
    post('a JSON number', { rawBody: '42' }, BODY),
    post('JSON null', { rawBody: 'null' }, BODY),
    post('JSON true', { rawBody: 'true' }, BODY),
    post('an empty body', { rawBody: '' }, bad(e.firstRequired)),
    post('a whitespace-only body', { rawBody: '   \n ' }, BODY),
    post('an empty JSON object', { rawBody: '{}' }, bad(e.firstRequired)),
    post('a 200 kB body', { rawBody: JSON.stringify({ ...e.valid, padding: 'x'.repeat(200_000) }) }, BODY),
    post('an unknown field holding JSON nested 20 000 levels deep', { rawBody: JSON.stringify(e.valid).replace(/}$/, `,"deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`) }, bad('deep')),
    post('a text/plain body', { contentType: 'text/plain', rawBody: 'amount=1000' }, BODY),
    post('a form-urlencoded body', { contentType: 'application/x-www-form-urlencoded', rawBody: 'amount=1000&currency=GHS' }, BODY),
    post('a multipart/form-data body', { contentType: 'multipart/form-data; boundary=XyZ', rawBody: multipart }, BODY),
    post('an XML body', { contentType: 'application/xml', rawBody: '<charge><amount>1000</amount></charge>' }, BODY),
    post('a latin1 charset', { contentType: 'application/json; charset=latin1', rawBody: JSON.stringify(e.valid) }, BODY),
    post('an unsupported Content-Encoding', { headers: { 'Content-Encoding': 'x-unknown' }, rawBody: JSON.stringify(e.valid) }, BODY),
    post('a corrupt gzip body', { headers: { 'Content-Encoding': 'gzip' }, rawBody: 'this is not gzip' }, BODY),
    post('an unknown field', { body: { ...e.valid, surprise: 1 } }, bad('surprise')),
    post('an unknown field named __proto__', { rawBody: JSON.stringify(e.valid).replace(/}$/, ',"__proto__":{"admin":true}}') }, bad('__proto__')),
    post('an unknown field named constructor', { body: { ...e.valid, constructor: { admin: true } } }, bad('constructor')),
  ];
}

/** Replaces (or, with undefined, removes) one field of a valid body. */
function withField(valid: Record<string, unknown>, field: string, value: unknown): Record<string, unknown> {
  const body: Record<string, unknown> = { ...valid };
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
}

function fieldCases(e: Pick<PostEndpoint, 'path' | 'valid'>, field: string, values: [string, unknown][], expectation: Expectation = bad(field)): Case[] {
  return values.map(([label, value]) => ({ name: `${field} ${label}`, method: 'post', path: e.path, body: withField(e.valid, field, value), expect: expectation }));
}

function rawAmountCases(e: Pick<PostEndpoint, 'path' | 'valid'>): Case[] {
  const raw = (literal: string) => JSON.stringify({ ...e.valid, amount: 0 }).replace('"amount":0', `"amount":${literal}`);
  return [
    { name: 'amount -0', method: 'post', path: e.path, rawBody: raw('-0'), expect: bad('amount') },
    { name: 'amount 1e400 (parses to Infinity)', method: 'post', path: e.path, rawBody: raw('1e400'), expect: bad('amount') },
    { name: 'amount 9007199254740993 written out (beyond float precision)', method: 'post', path: e.path, rawBody: raw('9007199254740993'), expect: bad('amount') },
  ];
}

const AMOUNTS: [string, unknown][] = [
  ['missing', undefined],
  ['zero', 0],
  ['negative', -1],
  ['negative and large', -1_000_000],
  ['fractional (10.5)', 10.5],
  ['fractional (0.001)', 0.001],
  ['huge (1e21)', 1e21],
  ['beyond safe integers (MAX_SAFE_INTEGER + 2)', Number.MAX_SAFE_INTEGER + 2],
  ['10^13, above the maximum', 10 ** 13],
  ['one above the maximum', MAX_AMOUNT + 1],
  ['as a string', '1000'],
  ['as a decimal string in major units', '10.00'],
  ['true', true],
  ['null', null],
  ['an array', [1000]],
  ['an object', { value: 1000 }],
];

const MSISDNS: [string, unknown][] = [
  ['missing', undefined],
  ['empty', ''],
  ['blank', '   '],
  ['too short (055123)', '055123'],
  ['one digit short', '055123498'],
  ['one digit long', '05512349870'],
  ['longer than 20 characters', '0551234987 0551234987 0551234987'],
  ['with letters', '05512349ab'],
  ['spelled out', 'zero five five'],
  ['Nigerian (+2348031234567)', '+2348031234567'],
  ['British (+447911123456)', '+447911123456'],
  ['with the 00 international prefix', '00233551234987'],
  ['with the trunk 0 after +233', '+2330551234987'],
  ['a Ghana landline (0302123456)', '0302123456'],
  ['with Arabic-Indic digits', '٠٥٥١٢٣٤٩٨٧'],
  ['as a number', 551234987],
  ['null', null],
  ['an array', ['0551234987']],
];

const NETWORKS: [string, unknown][] = [
  ['in lower case', 'mtn'],
  ['by its old name VODAFONE', 'VODAFONE'],
  ['AIRTELTIGO', 'AIRTELTIGO'],
  ['empty', ''],
  ['a number', 1],
  ['null', null],
];

const BANK_CODES: [string, unknown][] = [
  ['missing', undefined],
  ['unknown (999999)', '999999'],
  ['five digits', '04010'],
  ['seven digits', '0401000'],
  ['a short name (GCB)', 'GCB'],
  ['empty', ''],
  ['a number', 40100],
  ['null', null],
  ['toString (an Object.prototype key)', 'toString'],
  ['__proto__ (an Object.prototype key)', '__proto__'],
  ['constructor (an Object.prototype key)', 'constructor'],
  ['hasOwnProperty (an Object.prototype key)', 'hasOwnProperty'],
];

const ACCOUNT_NUMBERS: [string, unknown][] = [
  ['missing', undefined],
  ['five digits', '12345'],
  ['21 digits', '1'.repeat(21)],
  ['with letters', '10000000ab'],
  ['with a leading space', ' 1000000001'],
  ['empty', ''],
  ['a number', 1000000001],
  ['null', null],
];

const IDEMPOTENCY_KEYS: [string, string | string[] | null, string][] = [
  ['missing', null, 'required'],
  ['empty', '', 'required'],
  ['of 256 characters', 'k'.repeat(256), 'too long'],
  ['of 300 characters', 'k'.repeat(300), 'too long'],
  ['with a space', 'my key', 'space'],
  ['with a tab', 'my\tkey', 'tab'],
  ['with a non-ASCII character', 'cl\u00e9', 'non-ASCII'],
  ['sent twice', ['key-a', 'key-b'], 'two values joined by a comma and space'],
];

const AUTH: [string, Case['auth']][] = [
  ['no Authorization header', 'none'],
  ['a Basic credential', { header: 'Basic dXNlcjpwYXNz' }],
  ['Bearer with no key', { header: 'Bearer ' }],
  ['a key of the wrong shape', { header: 'Bearer sk_test_short' }],
  ['an unknown sk_test_ key', { header: 'Bearer sk_test_0000000000000000000000000000' }],
  ['an unknown sk_live_ key', { header: 'Bearer sk_live_0000000000000000000000000000' }],
  ['a 5 kB key', { header: `Bearer sk_test_${'a'.repeat(5_000)}` }],
];

function authCases(method: 'get' | 'post', path: string, body?: Json): Case[] {
  return AUTH.map(([label, auth]) => ({ name: `${label}`, method, path, body, auth, expect: { status: 401, code: 'unauthorized' } }));
}

function idempotencyCases(e: Pick<PostEndpoint, 'path' | 'valid'>): Case[] {
  return IDEMPOTENCY_KEYS.map(([label, key]) => ({
    name: `an Idempotency-Key ${label}`,
    method: 'post',
    path: e.path,
    body: e.valid,
    idempotencyKey: key,
    expect: bad('Idempotency-Key'),
  }));
}

function msisdnCases(e: Pick<PostEndpoint, 'path' | 'valid'>): Case[] {
  return [...fieldCases(e, 'msisdn', MSISDNS), ...fieldCases(e, 'network', NETWORKS)];
}

function getIdCases(path: string, prefix: 'chg' | 'trf', other: 'chg' | 'trf'): Case[] {
  // Any id that names nothing is 404, whatever its shape (DESIGN.md); only a URL that cannot be
  // decoded into an id at all is bad input.
  const missing: Expectation = { status: 404, code: 'not_found' };
  const get = (name: string, id: string, expectation: Expectation = missing): Case => ({ name, method: 'get', path: `${path}/${id}`, expect: expectation });
  return [
    get('an id that is too short', `${prefix}_123`),
    get('an id of 21 characters', `${prefix}_${'a'.repeat(21)}`),
    get('an id in upper case', `${prefix.toUpperCase()}_${'A'.repeat(20)}`),
    get('an id without its prefix', 'a'.repeat(20)),
    get(`an id of the other kind (${other}_)`, `${other}_${'a'.repeat(20)}`),
    get('an id of 5 000 characters', `${prefix}_${'a'.repeat(5_000)}`),
    get('an id with an encoded NUL byte', `${prefix}_${'a'.repeat(20)}%00`),
    get('an id with an encoded slash', `${prefix}_aaaaaaaaaa%2Faaaaaaaaa`),
    get('an id carrying SQL', encodeURIComponent(`${prefix}_' OR '1'='1`)),
    get('an id that is a lone % (malformed percent-encoding)', '%', undecodablePath('id')),
    get('an id with a truncated UTF-8 escape (%E0%A4%A)', '%E0%A4%A', undecodablePath('id')),
    get('a well-formed id that does not exist', `${prefix}_${'a'.repeat(20)}`),
  ];
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

const charges = POSTS[0]!;
const transfers = POSTS[1]!;
const momoName = POSTS[2]!;
const bankName = POSTS[3]!;
const fund = POSTS[4]!;
const advance = POSTS[5]!;
const outage = POSTS[6]!;
const keys = POSTS[7]!;
const ladder = POSTS.find((e) => e.path === '/api/v1/merchant/ladder')!;
const newKey = POSTS.find((e) => e.path === '/api/v1/keys')!;
const replay = POSTS.find((e) => e.path === '/api/v1/sandbox/replays')!;
const quote = POSTS[8]!;
const execute = POSTS[9]!;
const deposit = POSTS[10]!;
const review = POSTS[11]!;
const stage = POSTS[12]!;
const transfersBank = { path: transfers.path, valid: VALID.transferBank };

const TABLE: { endpoint: string; cases: Case[] }[] = [
  {
    endpoint: 'POST /api/v1/charges',
    cases: [
      ...bodyShapeCases(charges),
      ...fieldCases(charges, 'amount', AMOUNTS),
      ...rawAmountCases(charges),
      { name: 'amount 1, not more than its fee', method: 'post', path: charges.path, body: { ...VALID.charge, amount: 1 }, expect: bad('amount') },
      ...fieldCases(charges, 'currency', [
        ['missing', undefined],
        ['USD', 'USD'],
        ['in lower case', 'ghs'],
        ['a number', 936],
        ['null', null],
      ]),
      ...fieldCases(charges, 'channel', [
        ['missing', undefined],
        ['bank (charges are momo only)', 'bank'],
        ['card', 'card'],
        ['in upper case', 'MOMO'],
        ['null', null],
      ]),
      ...msisdnCases(charges),
      ...idempotencyCases(charges),
      ...authCases('post', charges.path, VALID.charge),
      { name: 'a key without collections:write', method: 'post', path: charges.path, body: VALID.charge, auth: 'read-only', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/transfers (signed)',
    cases: [
      ...bodyShapeCases(transfers),
      ...fieldCases(transfers, 'amount', AMOUNTS),
      ...rawAmountCases(transfers),
      {
        name: 'amount at the maximum, more than the wallet holds',
        method: 'post',
        path: transfers.path,
        body: { ...VALID.transferMomo, amount: MAX_AMOUNT },
        expect: { status: 422, code: 'insufficient_funds' },
      },
      ...fieldCases(transfers, 'currency', [
        ['missing', undefined],
        ['USD', 'USD'],
        ['null', null],
      ]),
      ...fieldCases(transfers, 'channel', [
        ['missing', undefined],
        ['card', 'card'],
        ['in upper case', 'MOMO'],
        ['a number', 1],
        ['null', null],
      ]),
      ...msisdnCases(transfers),
      { name: 'a momo transfer carrying bank fields', method: 'post', path: transfers.path, body: { ...VALID.transferMomo, account_number: '1000000001' }, expect: bad('account_number') },
      { name: 'a bank transfer carrying an msisdn', method: 'post', path: transfers.path, body: { ...VALID.transferBank, msisdn: '0551234987' }, expect: bad('msisdn') },
      ...fieldCases(transfersBank, 'bank_code', BANK_CODES),
      ...fieldCases(transfersBank, 'account_number', ACCOUNT_NUMBERS),
      ...fieldCases(transfersBank, 'bank_account_name', [
        ['missing', undefined],
        ['empty', ''],
        ['blank', '   '],
        ['of 101 characters', 'x'.repeat(101)],
        ['a number', 5],
        ['null', null],
      ]),
      ...idempotencyCases(transfers),
      ...authCases('post', transfers.path, VALID.transferMomo),
      { name: 'a key without transfers:write', method: 'post', path: transfers.path, body: VALID.transferMomo, auth: 'read-only', expect: { status: 403, code: 'forbidden' } },
      ...(
        [
          ['no signature headers', { omit: true }],
          ['a signature of another body', { signBody: JSON.stringify({ ...VALID.transferMomo, amount: 1 }) }],
          ['a signature that is not hex', { value: 'not-a-signature' }],
          ['an empty signature', { value: '' }],
          ['a timestamp an hour in the past', { timestamp: 'past' }],
          ['a timestamp an hour in the future', { timestamp: 'future' }],
          ['a timestamp in milliseconds', { timestamp: 'millis' }],
          ['a timestamp that is not a number', { timestamp: 'yesterday' }],
          ['a timestamp in exponent form', { timestamp: '1.7e9' }],
        ] as [string, NonNullable<Case['signature']>][]
      ).map(
        ([label, signature]): Case => ({
          name: label,
          method: 'post',
          path: transfers.path,
          body: VALID.transferMomo,
          signature,
          expect: { status: 401, code: 'invalid_signature' },
        }),
      ),
    ],
  },
  {
    endpoint: 'GET /api/v1/charges/:id',
    cases: [...getIdCases('/api/v1/charges', 'chg', 'trf'), ...authCases('get', `/api/v1/charges/chg_${'a'.repeat(20)}`)],
  },
  {
    endpoint: 'GET /api/v1/transfers/:id',
    cases: [...getIdCases('/api/v1/transfers', 'trf', 'chg'), ...authCases('get', `/api/v1/transfers/trf_${'a'.repeat(20)}`)],
  },
  {
    endpoint: 'POST /api/v1/resolve/momo-name',
    cases: [...bodyShapeCases(momoName), ...msisdnCases(momoName), ...authCases('post', momoName.path, VALID.momoName)],
  },
  {
    endpoint: 'POST /api/v1/resolve/bank-name',
    cases: [
      ...bodyShapeCases(bankName),
      ...fieldCases(bankName, 'bank_code', BANK_CODES),
      ...fieldCases(bankName, 'account_number', ACCOUNT_NUMBERS),
      ...authCases('post', bankName.path, VALID.bankName),
    ],
  },
  {
    endpoint: 'GET /api/v1/transactions',
    cases: [
      ...(
        [
          ['page_size=0', 'page_size=0', 'query.page_size'],
          ['page_size=101, above the maximum', 'page_size=101', 'query.page_size'],
          ['page_size=1000', 'page_size=1000', 'query.page_size'],
          ['page_size=abc', 'page_size=abc', 'query.page_size'],
          ['page_size=-1', 'page_size=-1', 'query.page_size'],
          ['page_size=1.5', 'page_size=1.5', 'query.page_size'],
          ['page_size=0x10 (hex)', 'page_size=0x10', 'query.page_size'],
          ['page_size=1e1 (exponent)', 'page_size=1e1', 'query.page_size'],
          ['an empty page_size', 'page_size=', 'query.page_size'],
          ['page_size=% (malformed percent-encoding)', 'page_size=%', 'query.page_size'],
          ['page_size given twice', 'page_size=1&page_size=2', 'query.page_size'],
          ['page_size[]=1', 'page_size[]=1', 'query.page_size[]'],
          ['a cursor the API never issued', 'cursor=zzz', 'query.cursor'],
          ['a cursor of 201 characters', `cursor=${'a'.repeat(201)}`, 'query.cursor'],
          ['cursor given twice', 'cursor=a&cursor=b', 'query.cursor'],
          ['an unknown type', 'type=refund', 'query.type'],
          ['a type in upper case', 'type=CHARGE', 'query.type'],
          ['an unknown query parameter', 'limit=10', 'query.limit'],
        ] as const
      ).map(([label, qs, field]): Case => ({ name: label, method: 'get', path: `/api/v1/transactions?${qs}`, expect: bad(field) })),
      { name: 'a malformed JSON body on a GET', method: 'get', path: '/api/v1/transactions', rawBody: '{"amount":', expect: BODY },
      ...authCases('get', '/api/v1/transactions'),
    ],
  },
  {
    endpoint: 'GET /api/v1/requests',
    cases: [
      ...(
        [
          ['page_size=0', 'page_size=0', 'query.page_size'],
          ['page_size=101, above the maximum', 'page_size=101', 'query.page_size'],
          ['page_size=abc', 'page_size=abc', 'query.page_size'],
          ['a cursor the API never issued', 'cursor=zzz', 'query.cursor'],
          ['an unknown kind', 'kind=webhook', 'query.kind'],
          ['a kind in upper case', 'kind=MOCK', 'query.kind'],
          ['a status that is no HTTP status', 'status=42', 'query.status'],
          ['a status of letters', 'status=abc', 'query.status'],
          ['status=600', 'status=600', 'query.status'],
          ['status given twice', 'status=200&status=201', 'query.status'],
          ['an object_id of 201 characters', `object_id=${'a'.repeat(201)}`, 'query.object_id'],
          ['an unknown query parameter', 'limit=10', 'query.limit'],
        ] as const
      ).map(([label, qs, field]): Case => ({ name: label, method: 'get', path: `/api/v1/requests?${qs}`, expect: bad(field) })),
      ...authCases('get', '/api/v1/requests'),
    ],
  },
  {
    endpoint: 'GET /api/v1/wallet',
    cases: [
      { name: 'a malformed JSON body on a GET', method: 'get', path: '/api/v1/wallet', rawBody: '{"amount":', expect: BODY },
      { name: 'a 200 kB body on a GET', method: 'get', path: '/api/v1/wallet', rawBody: JSON.stringify({ padding: 'x'.repeat(200_000) }), expect: BODY },
      { name: 'a corrupt gzip body on a GET', method: 'get', path: '/api/v1/wallet', headers: { 'Content-Encoding': 'gzip' }, rawBody: 'this is not gzip', expect: BODY },
      ...authCases('get', '/api/v1/wallet'),
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/wallet/fund',
    cases: [
      ...bodyShapeCases(fund),
      ...fieldCases(fund, 'amount', AMOUNTS),
      ...rawAmountCases(fund),
      { name: 'a live key', method: 'post', path: fund.path, body: VALID.fund, auth: 'live', expect: { status: 403, code: 'forbidden' } },
      ...authCases('post', fund.path, VALID.fund),
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/clock/advance',
    cases: [
      ...bodyShapeCases(advance),
      ...fieldCases(advance, 'seconds', [
        ['missing', undefined],
        ['negative', -1],
        ['more than a year', 366 * 24 * 3600 + 1],
        ['huge (1e21)', 1e21],
        ['as a string', '10'],
        ['true', true],
        ['null', null],
        ['an array', [10]],
        ['an object', { s: 10 }],
      ]),
      { name: 'a live key', method: 'post', path: advance.path, body: VALID.advance, auth: 'live', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/providers/:name/outage',
    cases: [
      ...bodyShapeCases(outage),
      ...fieldCases(outage, 'down', [
        ['missing', undefined],
        ['as a string', 'yes'],
        ['as a number', 1],
        ['null', null],
      ]),
      { name: 'a provider that does not exist', method: 'post', path: '/api/v1/sandbox/providers/no-such-rail/outage', body: VALID.outage, expect: { status: 404, code: 'not_found' } },
      { name: 'a provider name of 41 characters', method: 'post', path: `/api/v1/sandbox/providers/${'p'.repeat(41)}/outage`, body: VALID.outage, expect: { status: 404, code: 'not_found' } },
      { name: 'a provider name that is a lone % (malformed percent-encoding)', method: 'post', path: '/api/v1/sandbox/providers/%/outage', body: VALID.outage, expect: undecodablePath('name') },
      { name: 'a live key', method: 'post', path: outage.path, body: VALID.outage, auth: 'live', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/keys',
    cases: [
      ...bodyShapeCases(keys),
      ...fieldCases(keys, 'environment', [
        ['missing', undefined],
        ['prod', 'prod'],
        ['in upper case', 'LIVE'],
        ['a number', 1],
        ['null', null],
      ]),
      ...fieldCases(keys, 'scopes', [
        ['missing', undefined],
        ['empty', []],
        ['a string, not a list', 'read'],
        ['null', null],
      ]),
      ...fieldCases(
        keys,
        'scopes',
        [
          ['holding an unknown scope', ['admin']],
          ['holding a number', [1]],
        ],
        bad('scopes.0'),
      ),
      {
        name: 'a scope the calling key does not hold',
        method: 'post',
        path: keys.path,
        body: { environment: 'test', scopes: ['transfers:write'] },
        auth: 'read-only',
        expect: { status: 403, code: 'forbidden' },
      },
      { name: 'a live key', method: 'post', path: keys.path, body: VALID.keys, auth: 'live', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/trades/quote',
    cases: [
      ...bodyShapeCases(quote),
      ...fieldCases(quote, 'side', [
        ['missing', undefined],
        ['hold', 'hold'],
        ['in upper case', 'BUY'],
        ['a number', 1],
        ['null', null],
      ]),
      ...fieldCases(quote, 'asset', [
        ['missing', undefined],
        ['BTC', 'BTC'],
        ['in lower case', 'usdt'],
        ['a number', 1],
      ]),
      ...fieldCases(quote, 'network', [
        ['missing', undefined],
        ['BEP20', 'BEP20'],
        ['in lower case', 'trc20'],
        ['null', null],
      ]),
      { name: 'a network the asset does not trade on (USDT on SOL)', method: 'post', path: quote.path, body: { ...VALID.quote, network: 'SOL' }, expect: bad('network') },
      ...fieldCases(
        quote,
        'fiat_amount',
        AMOUNTS.filter(([label]) => label !== 'missing'),
      ),
      { name: 'neither fiat_amount nor asset_amount', method: 'post', path: quote.path, body: { side: 'buy', asset: 'USDT', network: 'TRC20' }, expect: bad('fiat_amount') },
      { name: 'both fiat_amount and asset_amount', method: 'post', path: quote.path, body: { ...VALID.quote, asset_amount: 1_000_000 }, expect: bad('fiat_amount') },
      ...fieldCases({ path: quote.path, valid: { side: 'sell', asset: 'USDT', network: 'TRC20' } }, 'asset_amount', [
        ['zero', 0],
        ['negative', -1],
        ['fractional', 1.5],
        ['huge (1e21)', 1e21],
        ['as a string', '1000000'],
      ]),
      { name: 'a live key while trading is not live', method: 'post', path: quote.path, body: VALID.quote, auth: 'live', expect: { status: 403, code: 'compliance_block' } },
      ...authCases('post', quote.path, VALID.quote),
    ],
  },
  {
    endpoint: 'POST /api/v1/trades (signed)',
    cases: [
      ...bodyShapeCases(execute),
      ...fieldCases(execute, 'quote_reference', [
        ['missing', undefined],
        ['of the wrong shape', 'quote-1'],
        ['a trade reference', 'trd_0000000000aaaaaaaaaa'],
        ['a number', 1],
        ['null', null],
      ]),
      { name: 'a quote that does not exist', method: 'post', path: execute.path, body: VALID.execute, expect: bad('quote_reference') },
      ...fieldCases(execute, 'delivery_address', [
        ['empty', ''],
        ['a number', 42],
        ['longer than 128 characters', 'T'.repeat(129)],
      ]),
      ...idempotencyCases(execute),
      { name: 'no signature', method: 'post', path: execute.path, body: VALID.execute, signature: { omit: true }, expect: { status: 401, code: 'invalid_signature' } },
      { name: 'a stale signature', method: 'post', path: execute.path, body: VALID.execute, signature: { timestamp: 'past' }, expect: { status: 401, code: 'invalid_signature' } },
      { name: 'a signature over another body', method: 'post', path: execute.path, body: VALID.execute, signature: { signBody: '{}' }, expect: { status: 401, code: 'invalid_signature' } },
      { name: 'a key without trades:write', method: 'post', path: execute.path, body: VALID.execute, auth: 'read-only', expect: { status: 403, code: 'forbidden' } },
      ...authCases('post', execute.path, VALID.execute),
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/deposits',
    cases: [
      ...bodyShapeCases(deposit),
      ...fieldCases(deposit, 'trade_reference', [
        ['missing', undefined],
        ['of the wrong shape', 'trade-1'],
        ['null', null],
      ]),
      ...fieldCases(deposit, 'asset_amount', [
        ['missing', undefined],
        ['zero', 0],
        ['negative', -5],
        ['fractional', 0.5],
        ['huge (1e21)', 1e21],
        ['as a string', '5'],
      ]),
      { name: 'a trade that does not exist', method: 'post', path: deposit.path, body: VALID.deposit, expect: { status: 404, code: 'not_found' } },
      { name: 'a live key', method: 'post', path: deposit.path, body: VALID.deposit, auth: 'live', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/trades/:reference/review',
    cases: [
      ...bodyShapeCases(review),
      ...fieldCases(review, 'decision', [
        ['missing', undefined],
        ['maybe', 'maybe'],
        ['in upper case', 'APPROVE'],
        ['true', true],
      ]),
      { name: 'a reference of the wrong shape', method: 'post', path: '/api/v1/sandbox/trades/nope/review', body: VALID.review, expect: { status: 404, code: 'not_found' } },
      { name: 'a trade that does not exist', method: 'post', path: review.path, body: VALID.review, expect: { status: 404, code: 'not_found' } },
      { name: 'a live key', method: 'post', path: review.path, body: VALID.review, auth: 'live', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/merchant/trading',
    cases: [
      ...bodyShapeCases(stage),
      ...fieldCases(stage, 'stage', [
        ['missing', undefined],
        ['production', 'production'],
        ['in upper case', 'LIVE'],
        ['null', null],
      ]),
      { name: 'a live key', method: 'post', path: stage.path, body: VALID.stage, auth: 'live', expect: { status: 403, code: 'forbidden' } },
    ],
  },
  {
    endpoint: 'POST /api/v1/merchant/ladder',
    cases: [
      ...bodyShapeCases(ladder),
      ...fieldCases(ladder, 'action', [
        ['missing', undefined],
        ['skip_ahead', 'skip_ahead'],
        ['in upper case', 'GO_LIVE'],
        ['a number', 1],
        ['null', null],
      ]),
    ],
  },
  {
    endpoint: 'POST /api/v1/sandbox/replays',
    cases: [
      ...bodyShapeCases(replay),
      ...fieldCases(replay, 'file', [
        ['missing', undefined],
        ['empty', ''],
        ['a number', 7],
        ['null', null],
        ['of 501 characters', 'a'.repeat(501)],
        ['an array', ['scenarios/failover.yaml']],
      ]),
      { name: 'a live key', method: 'post', path: replay.path, body: VALID.replay, auth: 'live', expect: { status: 403, code: 'forbidden' } },
      ...authCases('post', replay.path, VALID.replay),
    ],
  },
  {
    endpoint: 'GET /api/v1/trades/quotes',
    cases: [
      ...(
        [
          ['page_size=0', 'page_size=0', 'query.page_size'],
          ['page_size=101, above the maximum', 'page_size=101', 'query.page_size'],
          ['page_size=abc', 'page_size=abc', 'query.page_size'],
          ['a cursor the API never issued', 'cursor=zzz', 'query.cursor'],
          ['an unknown status', 'status=open', 'query.status'],
          ['a status in upper case', 'status=CREATED', 'query.status'],
          ['an unknown side', 'side=hold', 'query.side'],
          ['an unknown asset', 'asset=BTC', 'query.asset'],
          ['a created_from that is no time', 'created_from=yesterday', 'query.created_from'],
          ['an unknown query parameter', 'limit=10', 'query.limit'],
        ] as const
      ).map(([label, qs, field]): Case => ({ name: label, method: 'get', path: `/api/v1/trades/quotes?${qs}`, expect: bad(field) })),
      ...authCases('get', '/api/v1/trades/quotes'),
    ],
  },
  {
    endpoint: 'POST /api/v1/keys',
    cases: [
      ...bodyShapeCases(newKey),
      ...fieldCases(newKey, 'environment', [
        ['missing', undefined],
        ['prod', 'prod'],
        ['null', null],
      ]),
      ...fieldCases(newKey, 'scopes', [
        ['missing', undefined],
        ['empty', []],
        ['a string, not a list', 'read'],
      ]),
      ...fieldCases(newKey, 'role', [
        ['owner', 'owner'],
        ['in upper case', 'FINANCE'],
        ['null', null],
      ]),
      ...fieldCases(newKey, 'ip_allowlist', [
        ['a string, not a list', '127.0.0.1'],
        ['null', null],
      ]),
      ...fieldCases(
        newKey,
        'ip_allowlist',
        [
          ['holding a hostname', ['localhost']],
          ['holding a prefix too long', ['10.0.0.0/33']],
          ['holding a number', [127]],
          ['holding an address with a port', ['127.0.0.1:80']],
        ],
        bad('ip_allowlist.0'),
      ),
      {
        name: 'a scope the calling key does not hold',
        method: 'post',
        path: newKey.path,
        body: { environment: 'test', scopes: ['transfers:write'] },
        auth: 'read-only',
        expect: { status: 403, code: 'forbidden' },
      },
    ],
  },
];

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

let sb: TestSandbox;
let liveKey: string;
let readOnlyKey: string;
let freshKeys = 0;

const STATE_TABLES = ['merchants', 'api_keys', 'idempotency_keys', 'ledger_journals', 'ledger_postings', 'charges', 'transfers', 'rail_attempts', 'transactions', 'outbox_events', 'jobs'];

beforeAll(async () => {
  sb = await startTestSandbox();
  await sb.fund(1_000_000);
  // Something to page over and to look up, settled, so nothing is waiting on the clock.
  expect((await sb.charge(VALID.charge)).status).toBe(201);
  expect((await sb.transfer(VALID.transferMomo)).status).toBe(201);
  expect((await sb.transfer(VALID.transferBank)).status).toBe(201);
  await sb.advance(3600);
  const live = await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read', 'collections:write', 'transfers:write'] });
  expect(live.status).toBe(201);
  liveKey = live.body.data.key;
  const readOnly = await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] });
  expect(readOnly.status).toBe(201);
  readOnlyKey = readOnly.body.data.key;
});

afterAll(async () => {
  await sb?.close();
});

/** Everything a bad request must leave untouched. */
async function snapshot() {
  const listed = async () => {
    let n = 0;
    let cursor: string | null = null;
    do {
      const res = await sb.get(`/api/v1/transactions?page_size=100${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      n += res.body.data.length;
      cursor = res.body.meta.next_cursor;
    } while (cursor);
    return n;
  };
  const countRows = async (table: string) => [table, Number((await sb.ry.store.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n)] as const;
  const [wallet, liveWallet, transactionsListed, trialTest, trialLive, tables, clock, providers] = await Promise.all([
    sb.wallet(),
    sb.wallet(liveKey),
    listed(),
    sb.trialBalance('test'),
    sb.trialBalance('live'),
    Promise.all(STATE_TABLES.map(countRows)).then(Object.fromEntries),
    sb.get('/api/v1/sandbox/clock').then((r) => r.body.data),
    sb.get('/api/v1/sandbox/providers').then((r) => r.body.data.map((p: { name: string; status: string }) => `${p.name}:${p.status}`)),
  ]);
  return { wallet, liveWallet, transactionsListed, trialBalance: { test: trialTest, live: trialLive }, tables, clock, providers };
}

function authorization(c: Case): string | undefined {
  const auth = c.auth ?? 'test';
  if (auth === 'none') return undefined;
  if (typeof auth === 'object') return auth.header;
  return `Bearer ${auth === 'live' ? liveKey : auth === 'read-only' ? readOnlyKey : sb.key}`;
}

function send(c: Case) {
  const raw = c.rawBody ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
  let req = c.method === 'get' ? sb.http.get(c.path) : sb.http.post(c.path);
  const auth = authorization(c);
  if (auth !== undefined) req = req.set('Authorization', auth);
  if (raw !== undefined && c.contentType !== null) req = req.set('Content-Type', c.contentType ?? 'application/json');
  let idempotencyKey: string | undefined;
  if (IDEMPOTENT.has(c.path)) {
    const key = c.idempotencyKey === undefined ? `bad-input-${++freshKeys}` : c.idempotencyKey;
    if (key !== null) req = req.set('Idempotency-Key', key as string); // an array sends the header twice
    // What the server reads from the header: node joins repeated headers with ", " and decodes
    // header bytes as latin1, while the client sent them as UTF-8.
    if (key !== null) idempotencyKey = Buffer.from(Array.isArray(key) ? key.join(', ') : String(key), 'utf8').toString('latin1');
  }
  if (SIGNED.has(c.path) && !c.signature?.omit) {
    const now = Math.floor(sb.ry.wallClock.now() / 1000);
    // Well outside the ±300 s window: a request that crosses a second boundary cannot bring it back in
    // (the 301 s edges are auth.test.ts's).
    const ts =
      c.signature?.timestamp === 'past'
        ? String(now - 3600)
        : c.signature?.timestamp === 'future'
          ? String(now + 3600)
          : c.signature?.timestamp === 'millis'
            ? String(now * 1000)
            : (c.signature?.timestamp ?? String(now));
    const signature = c.signature?.value ?? signRequest(sb.signingSecret, ts, { method: 'POST', pathAndQuery: c.path, idempotencyKey, rawBody: c.signature?.signBody ?? raw ?? '' });
    req = req.set('X-Service-Timestamp', ts).set('X-Service-Signature', signature);
  }
  for (const [name, value] of Object.entries(c.headers ?? {})) req = req.set(name, value as string);
  return raw === undefined ? req : req.send(raw);
}

function describeExpectation(e: Expectation): string {
  const field = e.field instanceof RegExp ? (e.fieldLabel ?? String(e.field)) : e.field;
  return `${e.status} ${e.code}${field ? ` naming ${field}` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

describe('Bad input never yields a 500', () => {
  for (const { endpoint, cases } of TABLE) {
    describe(endpoint, () => {
      const named = cases.map((c) => [`${c.name} → ${describeExpectation(c.expect)}, and changes nothing`, c] as const);
      it.each(named)('%s', async (_title, c) => {
        const before = await snapshot();
        const res = await send(c);

        expect(res.status, `never a 5xx: ${JSON.stringify(res.body)}`).toBeLessThan(500);
        expect(res.status, JSON.stringify(res.body)).toBe(c.expect.status);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body).toEqual({ status: false, message: expect.any(String), error: expect.objectContaining({ code: c.expect.code }) });
        expect(res.body.message.length).toBeGreaterThan(0);
        if (c.expect.code === 'validation_error') {
          const fields = res.body.error.details?.fields;
          expect(Array.isArray(fields) && fields.length > 0, 'details.fields lists the offending fields').toBe(true);
          for (const f of fields) expect(f).toEqual({ field: expect.any(String), message: expect.any(String) });
          const names: string[] = fields.map((f: { field: string }) => f.field);
          const wanted = c.expect.field;
          if (typeof wanted === 'string') expect(names).toContain(wanted);
          else if (wanted)
            expect(
              names.some((n) => wanted.test(n)),
              `${JSON.stringify(names)} should match ${wanted}`,
            ).toBe(true);
        }

        expect(await snapshot()).toEqual(before);
      });
    });
  }
});

describe('MSISDN forms that normaliseMsisdn accepts are not bad input', () => {
  const ACCEPTED = ['0551234987', '233551234987', '+233551234987', '+233 55 123 4987', '055 123 4987', '055-123-4987', '233-55-123-4987', ' 0551234987 '];

  it.each(ACCEPTED)('%j resolves to the wallet 233551234987', async (msisdn) => {
    expect(normaliseMsisdn(msisdn)).toBe('233551234987');
    const res = await sb.post('/api/v1/resolve/momo-name', { msisdn });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toMatchObject({ instrument: '233551234987', channel: 'momo' });
  });

  it.each(MSISDNS.filter(([, v]) => typeof v === 'string').map(([label, v]) => [label, v as string]))('normaliseMsisdn refuses the %s form, as the API does', (_label, msisdn) => {
    expect(normaliseMsisdn(msisdn)).toBeNull();
  });
});
