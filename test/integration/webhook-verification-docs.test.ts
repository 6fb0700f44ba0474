// docs/webhooks.md's hand-written verification examples (Python standard library, node:crypto),
// run exactly as they stand in the docs on a webhook railyard really delivered: they accept it,
// and refuse a tampered body, a wrong secret and an old timestamp.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const webhooksDoc = readFileSync(resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');

/** The one fenced block of `lang` between `<!-- verify:name:start -->` and `<!-- verify:name:end -->`. */
function docBlock(name: string, lang: string): string {
  const start = webhooksDoc.indexOf(`<!-- verify:${name}:start -->`);
  const end = webhooksDoc.indexOf(`<!-- verify:${name}:end -->`);
  if (start < 0 || end < start) throw new Error(`docs/webhooks.md has no <!-- verify:${name}:start/end --> block`);
  const blocks = [...webhooksDoc.slice(start, end).matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);
  if (blocks.length !== 1) throw new Error(`expected one ${lang} block for verify:${name}, found ${blocks.length}`);
  return blocks[0]!;
}

/** What the merchant's receiver got: the raw body and the Standard Webhooks headers. */
interface Delivered {
  headers: Record<string, string>;
  body: string;
}

/** A case for an example: its inputs and whether it must accept them. */
interface Case {
  name: string;
  secret: string;
  headers: Record<string, string>;
  body: string;
  /** Unix seconds the verifier takes as now; its own clock when absent. */
  now?: number;
}

// Each driver reads the cases as JSON on stdin and prints one true/false per case, calling the
// documented function as a merchant would: the raw body as bytes, the headers lower-case.
const PYTHON_DRIVER = `
import json, sys
for case in json.load(sys.stdin):
    print(json.dumps(verify_webhook(case["secret"], case["headers"], case["body"].encode("utf-8"), case.get("now"))))
`;
const NODE_DRIVER = `
const input = await new Promise((done) => { let s = ''; process.stdin.on('data', (d) => (s += d)).on('end', () => done(s)); });
for (const c of JSON.parse(input)) console.log(JSON.stringify(verifyWebhook(c.secret, c.headers, Buffer.from(c.body, 'utf8'), ...(c.now === undefined ? [] : [c.now]))));
`;

let dir: string;
let sb: TestSandbox;
let receiver: Server;
let secret: string;
let delivered: Delivered;
let cases: { case: Case; accepts: boolean }[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'railyard-webhook-docs-'));
  const received: Delivered[] = [];
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        received.push({ headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])), body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('ok');
      });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  sb = await startTestSandbox();
  const endpoint = await sb.post('/api/v1/webhook_endpoints', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks` }, {});
  expect(endpoint.status).toBe(201);
  secret = endpoint.body.data.secret;
  const quote = await sb.post('/api/v1/trades/quote', { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 });
  expect(quote.status).toBe(201);
  await sb.advance(0);
  expect(received).toHaveLength(1);
  delivered = received[0]!;

  const timestamp = Number(delivered.headers['webhook-timestamp']);
  const tamperedBody = delivered.body.replace('"quote.created"', '"quote.expired"');
  expect(tamperedBody).not.toBe(delivered.body);
  const valid: Case = { name: 'the delivery as received', secret, headers: pick(delivered.headers), body: delivered.body };
  cases = [
    { case: valid, accepts: true },
    {
      case: {
        ...valid,
        name: 'a second signature from a rotation',
        headers: { ...valid.headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')} ${valid.headers['webhook-signature']}` },
      },
      accepts: true,
    },
    { case: { ...valid, name: 'four minutes later', now: timestamp + 240 }, accepts: true },
    { case: { ...valid, name: 'a tampered body', body: tamperedBody }, accepts: false },
    { case: { ...valid, name: 'another secret', secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` }, accepts: false },
    { case: { ...valid, name: 'another webhook-id', headers: { ...valid.headers, 'webhook-id': 'evt_someoneelse' } }, accepts: false },
    { case: { ...valid, name: 'replayed six minutes later', now: timestamp + 360 }, accepts: false },
    { case: { ...valid, name: 'no signature header', headers: { 'webhook-id': valid.headers['webhook-id']!, 'webhook-timestamp': valid.headers['webhook-timestamp']! } }, accepts: false },
  ];
});

afterAll(async () => {
  await sb?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((done) => (receiver ? receiver.close(() => done()) : done()));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function pick(headers: Record<string, string>): Record<string, string> {
  return { 'webhook-id': headers['webhook-id']!, 'webhook-timestamp': headers['webhook-timestamp']!, 'webhook-signature': headers['webhook-signature']! };
}

/** Runs a program on the cases; one verdict per case, by name. */
function run(command: string, args: string[]): Record<string, boolean> {
  const result = spawnSync(command, args, { input: JSON.stringify(cases.map((c) => c.case)), encoding: 'utf8', timeout: 15_000 });
  // A missing interpreter is a failure, never a skip: CI must have it.
  if (result.error) throw new Error(`could not run ${command}: ${result.error.message}`);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const verdicts = result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as boolean);
  return Object.fromEntries(cases.map((c, i) => [c.case.name, verdicts[i]!]));
}

const expected = () => Object.fromEntries(cases.map((c) => [c.case.name, c.accepts]));

describe('docs/webhooks.md: verifying a signature by hand', () => {
  it('receives a real webhook from railyard to verify, signed with the endpoint secret', () => {
    expect(secret).toMatch(/^whsec_/);
    expect(delivered.headers['webhook-signature']).toMatch(/^v1,/);
    expect(JSON.parse(delivered.body).type).toBe('quote.created');
  });

  it('spells out each step of the Standard Webhooks check', () => {
    for (const step of ['`whsec_`', 'base64-decode', '${webhook-id}.${webhook-timestamp}.${body}', 'base64-encoded', 'space-separated', 'constant time', '5 minutes']) {
      expect(webhooksDoc, step).toContain(step);
    }
  });

  it('the Python example (standard library only) accepts the delivery and refuses every alteration', () => {
    const block = docBlock('python', 'python');
    expect(block).not.toMatch(/^\s*(import|from)\s+(?!base64|hashlib|hmac|time)\w+/m);
    const script = join(dir, 'verify_webhook.py');
    writeFileSync(script, block + PYTHON_DRIVER);
    expect(run('python3', [script])).toEqual(expected());
  });

  it('the Node example (node:crypto only) accepts the delivery and refuses every alteration', () => {
    const block = docBlock('node', 'js');
    expect([...block.matchAll(/from '([^']+)'/g)].map((m) => m[1])).toEqual(['node:crypto']);
    const script = join(dir, 'verify-webhook.mjs');
    writeFileSync(script, block + NODE_DRIVER);
    expect(run(process.execPath, [script])).toEqual(expected());
  });
});
