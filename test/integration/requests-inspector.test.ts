// GET /api/v1/requests: the requests inspector. Every merchant request and every call that
// reached a provider mock, newest first, in a capped ring per environment; for mock calls, the
// scenario rule that decided the call, or the nearest rule and the condition it failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestLogEntry } from '../../src/inspector/request-log.ts';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { loadScenarios, parseRule } from '../../src/railyard-scenarios.ts';

// What the API answers: the log's entry, with a match report read loosely.
type Entry = Omit<RequestLogEntry, 'match'> & { match: Record<string, any> | null };

async function list(sb: TestSandbox, query = '', key?: string): Promise<{ data: Entry[]; next: string | null }> {
  const res = await sb.get(`/api/v1/requests${query ? `?${query}` : ''}`, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { data: res.body.data, next: res.body.meta.next_cursor };
}

describe('a capped log', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startTestSandbox({ inspector: { max_requests: 5 } });
  });
  afterAll(() => sb.close());

  it('keeps exactly inspector.max_requests entries, the newest, when more were made', async () => {
    for (let i = 0; i < 8; i++) expect((await sb.get(`/api/v1/charges/chg_missing${i}`)).status).toBe(404);
    const { data, next } = await list(sb, 'page_size=100');
    expect(data).toHaveLength(5);
    expect(next).toBeNull();
    expect(data.map((e) => e.path)).toEqual([7, 6, 5, 4, 3].map((i) => `/api/v1/charges/chg_missing${i}`));
    expect(data.every((e) => e.kind === 'merchant' && e.method === 'GET' && e.status === 404)).toBe(true);
  });

  it('cuts a very long path, so each entry stays small', async () => {
    expect((await sb.get(`/api/v1/charges/chg_${'a'.repeat(4_000)}`)).status).toBe(404);
    const [entry] = (await list(sb, 'page_size=1')).data;
    expect(entry!.path.startsWith('/api/v1/charges/chg_aaa')).toBe(true);
    expect(entry!.path.length).toBeLessThanOrEqual(513);
  });

  it('does not record its own listing', async () => {
    await list(sb);
    await list(sb);
    expect((await list(sb, 'page_size=100')).data.some((e) => e.path === '/api/v1/requests')).toBe(false);
  });
});

describe('the requests of a sandbox', () => {
  let sb: TestSandbox;
  const CARD = '4111 1111 1111 1111';
  beforeAll(async () => {
    // The shipped sandbox rules and one card rule, so a card call has a rule to miss.
    const cardRule = parseRule({ name: 'card 4000000000000002 is declined', match: { card: '4000000000000002' }, collect: { any: { respond: 'reject', reason: 'do_not_honour' } } });
    sb = await startTestSandbox({}, [...loadScenarios([SANDBOX_SCENARIOS]).rules, cardRule]);
    await sb.fund(1_000_000);
  });
  afterAll(() => sb.close());

  it('records a merchant request: method, path, status, latency, Idempotency-Key and the object it made', async () => {
    const res = await sb.charge({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }, { idempotencyKey: 'inspect-1' });
    expect(res.status).toBe(201);
    const [entry] = (await list(sb, 'kind=merchant&page_size=1')).data;
    expect(entry).toMatchObject({
      kind: 'merchant',
      method: 'POST',
      path: '/api/v1/charges',
      status: 201,
      idempotency_key: 'inspect-1',
      object_id: res.body.data.id,
      provider: null,
      match: null,
    });
    expect(entry!.id).toMatch(/^req_/);
    expect(entry!.latency_ms).toEqual(expect.any(Number));
    expect(Date.parse(entry!.at)).toBe(sb.ry.clock.now());
  });

  it('names the scenario rule that decided a mock call, and links the call to its object', async () => {
    const charge = (await sb.charge({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' })).body.data;
    const calls = (await list(sb, `kind=mock&object_id=${charge.id}`)).data;
    const decided = calls.filter((c) => c.match !== null);
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({
      kind: 'mock',
      provider: 'mtn-momo',
      method: 'POST',
      status: 202,
      object_id: charge.id,
      match: { matched: true, file: expect.stringMatching(/sandbox\.yaml$/), rule_index: 0, rule_name: 'momo number 0551234987 succeeds' },
    });
    expect(decided[0]!.path).toMatch(/^\/mocks\/mtn-momo\//);
  });

  it('explains an unmatched mock call: the nearest rule and the predicate that failed', async () => {
    const charge = (await sb.charge({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234000' })).body.data;
    const calls = (await list(sb, `kind=mock&object_id=${charge.id}`)).data.filter((c) => c.match !== null);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.match).toEqual({
      matched: false,
      nearest: { file: expect.stringMatching(/sandbox\.yaml$/), rule_index: 0, rule_name: 'momo number 0551234987 succeeds' },
      failed: 'msisdn 233551234000 is not 233551234987',
    });
  });

  it('shows the failover as two mock calls, the first never answered within the timeout', async () => {
    const charge = (await sb.charge({ amount: 2_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' })).body.data;
    const calls = (await list(sb, `kind=mock&object_id=${charge.id}`)).data.filter((c) => c.match !== null).reverse();
    expect(calls.map((c) => c.provider)).toEqual(['mtn-momo', 'hubtel']);
    expect(calls.map((c) => c.match!.rule_name)).toEqual(Array(2).fill('momo number 0551234989 times out at the primary and succeeds after failover'));
  });

  it('filters by status and pages with a cursor, newest first, without repeats', async () => {
    const all = (await list(sb, 'page_size=100')).data;
    const created = (await list(sb, 'status=201&page_size=100')).data;
    expect(created.length).toBeGreaterThan(0);
    expect(created).toEqual(all.filter((e) => e.status === 201));

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Entry[]; next: string | null } = await list(sb, `page_size=3${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((e) => e.id));
      cursor = page.next;
    } while (cursor);
    expect(seen).toEqual(all.map((e) => e.id));
    expect(all.map((e) => Number(e.id.slice(4)))).toEqual([...all.map((e) => Number(e.id.slice(4)))].sort((a, b) => b - a));
  });

  it('keeps environments apart', async () => {
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] })).body.data.key;
    await sb.get('/api/v1/wallet', live);
    const liveEntries = (await list(sb, 'page_size=100', live)).data;
    expect(liveEntries.map((e) => `${e.method} ${e.path}`)).toEqual(['GET /api/v1/wallet']);
    expect((await list(sb, 'page_size=100')).data.some((e) => e.path === '/api/v1/wallet' && e.kind === 'merchant' && e.object_id === null && e.status === 200)).toBe(false);
  });

  it('never holds an API key, a signing secret, a card number or an OTP', async () => {
    const transfer = await sb.transfer({ amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(transfer.status).toBe(201);
    const card = await sb.post('/v1/collections', { amount: '200.00', currency: 'GHS', channel: 'card', customer: CARD }, { idempotencyKey: 'inspect-card' });
    expect(card.status).toBe(201);
    const otpCard = await sb.post('/v1/collections', { amount: '200.00', currency: 'GHS', channel: 'card', customer: '4000 0000 0000 3410' }, { idempotencyKey: 'inspect-otp' });
    expect((await sb.post(`/v1/collections/${otpCard.body.data.id}/otp`, { otp: '918273' })).status).toBe(200);

    const entries = (await list(sb, 'page_size=100')).data;
    const cardCall = entries.find((e) => e.kind === 'mock' && e.provider === 'card-processor' && e.object_id === card.body.data.id && e.match);
    expect(cardCall!.match).toMatchObject({ matched: false, nearest: { rule_name: 'card 4000000000000002 is declined' }, failed: 'card ending 1111 is not ending 0002' });
    expect(entries.some((e) => e.path === `/v1/collections/${otpCard.body.data.id}/otp`)).toBe(true);

    const text = JSON.stringify(entries);
    for (const secret of [sb.key, sb.signingSecret, CARD.replaceAll(' ', ''), CARD, '4000000000003410', '918273', 'Bearer']) {
      expect(text, secret).not.toContain(secret);
    }
  });
});
