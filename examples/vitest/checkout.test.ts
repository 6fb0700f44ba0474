import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RailyardConnection } from 'railyard/testing';
import { railyard } from './railyard.ts';

// A merchant's checkout, tested against railyard: 50 customers, each paying into a merchant of
// its own, so the tests share one sandbox without seeing each other's money or webhooks.

let sandbox: RailyardConnection;
beforeAll(async () => {
  sandbox = await railyard();
});
afterAll(() => sandbox.close());

describe('checkout', () => {
  for (let n = 1; n <= 50; n++) {
    it(`customer ${n} pays ${n}.00 GHS by mobile money and the order is paid on the webhook`, async () => {
      const shop = await sandbox.newMerchant({ name: `Shop ${n}` });
      const charge = await shop.post('/api/v1/charges', { amount: n * 100, currency: 'GHS', channel: 'momo', msisdn: '0551234987' });
      expect(charge.status).toBe(201);
      expect(charge.body.data.status).toBe('pending_provider');

      // The customer approves on their phone; the provider calls back 5 s later (business time).
      await sandbox.clock.advance('5s');
      const paid = await shop.webhooks.waitFor('charge.success', (c: { id: string }) => c.id === charge.body.data.id);
      expect(paid.data.object).toMatchObject({ amount: n * 100, status: 'success' });

      // Only this merchant's wallet moved: the amount less the 1% fee.
      const wallet = await shop.get('/api/v1/wallet');
      expect(wallet.body.data.available).toBe(n * 100 - n);
    });
  }
});
