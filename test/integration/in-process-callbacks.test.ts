// railyard's own mocks call back to railyard's own receiver (/internal/callbacks/...). Those
// callbacks are handed over in process, not sent through a socket to itself: the listening server
// never sees them, and everything that observes a callback sees what it saw before (the record's
// outcome and events, the object timeline, the `callback received` line and the request log line).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/kernel/logger.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
/** The path of every request the listening server was sent. */
const served: string[] = [];
const logged: Record<string, unknown>[] = [];

beforeAll(async () => {
  sb = await startTestSandbox({ log_requests: true }, undefined, [], { logger: jsonLogger((line) => logged.push(JSON.parse(line))) });
  sb.server.on('request', (req: { url?: string }) => served.push(req.url ?? ''));
  await sb.fund(1_000_000);
});
afterAll(async () => {
  await sb?.close();
});

const momo = (msisdn: string) => ({ amount: 10_000, currency: 'GHS', channel: 'momo', msisdn });
const callbacksServed = () => served.filter((path) => path.startsWith('/internal/callbacks/'));
const timeline = async (id: string) => (await sb.get(`/api/v1/objects/${id}/timeline`)).body.data.entries as { kind: string; title: string }[];
const titlesOf = async (id: string, kind: string) => (await timeline(id)).filter((e) => e.kind === kind).map((e) => e.title);
const lines = (message: string) => logged.filter((line) => line.msg === message || line.message === message);

describe("a callback from railyard's own mock to railyard's own receiver", () => {
  it('settles charges and transfers by MTN, Hubtel and the signed bank rail without a request to the listening server', async () => {
    const mtn = await sb.charge(momo('0551234987'));
    const hubtel = await sb.charge(momo('0201234567'));
    const transfer = await sb.transfer(momo('0551234987'));
    const bank = await sb.transfer({ amount: 10_000, currency: 'GHS', channel: 'bank', account_number: '1000000001', bank_code: '040100', bank_account_name: 'Ama Owusu' });
    expect([mtn.body.data.provider, hubtel.body.data.provider, transfer.body.data.provider, bank.body.data.provider]).toEqual(['mtn-momo', 'hubtel', 'mtn-momo', 'bank-rail']);
    // The adapters reach the mocks in process too (own-mocks-in-process.test.ts): the server saw the merchant's requests alone.
    expect(served.filter((path) => path.startsWith('/mocks/'))).toEqual([]);
    expect(served.filter((path) => path.startsWith('/api/v1/charges') || path.startsWith('/api/v1/transfers'))).toHaveLength(4);

    await sb.advance(10);

    expect(callbacksServed()).toEqual([]);
    for (const [kind, id, provider] of [
      ['charges', mtn.body.data.id, 'mtn-momo'],
      ['charges', hubtel.body.data.id, 'hubtel'],
      ['transfers', transfer.body.data.id, 'mtn-momo'],
      ['transfers', bank.body.data.id, 'bank-rail'],
    ]) {
      expect((await sb.get(`/api/v1/${kind}/${id}`)).body.data.status, `${kind} ${id}`).toBe('success');
      expect(await titlesOf(id, 'callback')).toEqual([`callback from ${provider}: success -> settled`]);
    }
    expect(await sb.events(mtn.body.data.id)).toEqual(['charge.pending', 'charge.success']);
    expect(await sb.events(bank.body.data.id)).toEqual(['transfer.pending', 'transfer.success']);
    expectBalanced(await sb.trialBalance());
  });

  it('is logged as before: the callback received line, and a request line with the secret segment redacted', () => {
    expect(
      lines('callback received')
        .map((l) => l.provider)
        .sort(),
    ).toEqual(['bank-rail', 'hubtel', 'mtn-momo', 'mtn-momo']);
    const requests = lines('request').filter((l) => String(l.path).startsWith('/internal/callbacks/'));
    expect(requests.map((l) => `${l.method} ${l.path} ${l.status}`).sort()).toEqual([
      'POST /internal/callbacks/bank-rail/[redacted] 200',
      'POST /internal/callbacks/hubtel/[redacted] 200',
      'POST /internal/callbacks/mtn-momo/[redacted] 200',
      'PUT /internal/callbacks/mtn-momo/[redacted] 200',
    ]);
    for (const line of requests) expect(line.ms).toEqual(expect.any(Number));
  });

  it("settles a card's OTP and a direct debit's approval, whose webhooks the mocks send at once, in process too", async () => {
    const card = await sb.post('/v1/collections', { amount: '200.00', currency: 'GHS', channel: 'card', customer: '4000 0000 0000 3410' }, { idempotencyKey: 'inproc-card' });
    const otp = await sb.post(`/v1/collections/${card.body.data.id}/otp`, { otp: '123456' });
    expect(otp.body.data).toMatchObject({ status: 'settled', next_action: null });
    expect(await sb.events(card.body.data.id)).toEqual(['collection.pending', 'collection.settled']);

    const debit = await sb.post(
      '/v1/collections',
      { amount: '300.00', currency: 'GHS', channel: 'bank', customer: { account_number: '2000000001', bank_code: '040100' } },
      { idempotencyKey: 'inproc-debit' },
    );
    const approved = await sb.post(`/api/v1/sandbox/collections/${debit.body.data.id}/approve`, {});
    expect(approved.body.data.status).toBe('settled');
    expect(await sb.events(debit.body.data.id)).toEqual(['collection.pending', 'collection.settled']);

    expect(callbacksServed()).toEqual([]);
    // The webhook settles the record; the OTP's (the approval's) own answer, read after it, finds it settled.
    expect(await titlesOf(card.body.data.id, 'callback')).toEqual(['callback from card-processor: success -> settled', 'callback from card-processor: success -> ignored']);
    expect(await titlesOf(debit.body.data.id, 'callback')).toEqual(['callback from direct-debit: success -> settled', 'callback from direct-debit: success -> ignored']);
  });

  it('leaves the receiver served over HTTP to everyone else, with the same answers', async () => {
    const forged = await sb.http.post('/internal/callbacks/mtn-momo/not-the-token').send({ externalId: 'chg_nothing', status: 'SUCCESSFUL' });
    expect(forged.status).toBe(401);
    expect(forged.body).toEqual({ status: false, message: 'Callback not authentic', error: { code: 'unauthorized' } });
    expect(callbacksServed()).toEqual(['/internal/callbacks/mtn-momo/not-the-token']);
  });
});
