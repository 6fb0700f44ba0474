import { connectRailyard } from 'railyard/testing';

// Jest's globals (describe, it, expect, beforeAll, afterAll), as Jest provides them.
// Each test pays into a merchant of its own, so tests never see each other's money or webhooks.

let sandbox;
beforeAll(async () => {
  sandbox = await connectRailyard();
});
afterAll(() => sandbox.close());

describe('checkout', () => {
  for (let n = 1; n <= 10; n++) {
    it(`customer ${n} pays ${n}.00 GHS by mobile money and the order is paid on the webhook`, async () => {
      const shop = await sandbox.newMerchant({ name: `Shop ${n}` });
      const charge = await shop.post('/api/v1/charges', { amount: n * 100, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
      expect(charge.status).toBe(201);

      // The provider calls back 5 s later, in business time.
      await sandbox.clock.advance('5s');
      const paid = await shop.webhooks.waitFor('charge.success', (c) => c.id === charge.body.data.id);
      expect(paid.data.object).toMatchObject({ amount: n * 100, status: 'success' });
      expect((await shop.get('/api/v1/wallet')).body.data.available).toBe(n * 100 - n);
    });
  }

  it('refuses a transfer beyond the wallet, whatever another test funded', async () => {
    const shop = await sandbox.newMerchant();
    const transfer = await shop.post('/api/v1/transfers', { amount: 1_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
    expect(transfer.status).toBe(422);
    expect(transfer.body.error.code).toBe('insufficient_funds');
  });
});
