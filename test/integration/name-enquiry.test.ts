import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

describe('POST /api/v1/resolve/momo-name', () => {
  it('resolves the success number to its scenario name', async () => {
    const res = await sb.post('/api/v1/resolve/momo-name', { msisdn: '+233551234987' });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ name: 'Kwame Mensah', instrument: '233551234987', channel: 'momo', provider: 'mtn-momo', network: 'MTN' });
  });

  it('answers 404 not_found for the insufficient-funds number ("no match")', async () => {
    const res = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0551234988' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('fails over when the primary times out', async () => {
    const res = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0551234989' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Akosua Boateng', provider: 'hubtel' });
  });

  it('gives any other number a seeded name: the same number always resolves to the same name', async () => {
    const a = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0207654321' });
    const b = await sb.post('/api/v1/resolve/momo-name', { msisdn: '233207654321' });
    const other = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0207654322' });
    expect(a.body.data.name).toMatch(/^\S+ \S+/);
    expect(b.body.data.name).toBe(a.body.data.name);
    expect(other.body.data.name).not.toBe(a.body.data.name);
    await sb.close();
    sb = await startTestSandbox({ seed: 99 });
    expect((await sb.post('/api/v1/resolve/momo-name', { msisdn: '0207654321' })).body.data.name).toBe(a.body.data.name);
  });

  it('answers 502 provider_unavailable when every momo provider is down', async () => {
    await sb.post('/api/v1/sandbox/providers/mtn-momo/outage', { down: true });
    await sb.post('/api/v1/sandbox/providers/hubtel/outage', { down: true });
    const res = await sb.post('/api/v1/resolve/momo-name', { msisdn: '0551234987' });
    expect(res.status).toBe(502);
    expect(res.body.error).toEqual({
      code: 'provider_unavailable',
      details: {
        attempts: [
          { provider: 'mtn-momo', outcome: 'skipped_down' },
          { provider: 'hubtel', outcome: 'skipped_down' },
        ],
      },
    });
  });
});

describe('POST /api/v1/resolve/bank-name', () => {
  it('resolves GCB account 1000000001', async () => {
    const res = await sb.post('/api/v1/resolve/bank-name', { account_number: '1000000001', bank_code: '040100' });
    expect(res.body.data).toEqual({ name: 'Ama Owusu', instrument: '1000000001', channel: 'bank', provider: 'bank-rail', bank_code: '040100' });
  });

  it('answers 404 for GCB account 1000000003', async () => {
    const res = await sb.post('/api/v1/resolve/bank-name', { account_number: '1000000003', bank_code: '040100' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('answers 502 when the bank rail is down', async () => {
    await sb.post('/api/v1/sandbox/providers/bank-rail/outage', { down: true });
    const res = await sb.post('/api/v1/resolve/bank-name', { account_number: '1000000001', bank_code: '040100' });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe('provider_unavailable');
  });

  it('moves no money', async () => {
    const before = await sb.ry.store.all('SELECT * FROM ledger_postings');
    await sb.post('/api/v1/resolve/bank-name', { account_number: '1000000001', bank_code: '040100' });
    await sb.post('/api/v1/resolve/momo-name', { msisdn: '0551234987' });
    expect(await sb.ry.store.all('SELECT * FROM ledger_postings')).toEqual(before);
    expect((await sb.get('/api/v1/transactions')).body.data).toEqual([]);
  });
});
