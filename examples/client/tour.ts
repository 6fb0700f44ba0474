import type { RailyardClient } from 'railyard/client';

// The README's five-minute tour with the typed client (railyard/client) instead of curl: the same
// requests, block by block, each block's output the same lines the curl block prints. The client
// signs transfers and trade executes and adds Idempotency-Keys itself.
// test/e2e/readme-tour-client.test.ts runs it and checks it as the curl tour is checked.

/** Each block's printed output; `wait(seconds)` is the tour's sleep (or a clock advance). */
export async function clientTour(client: RailyardClient, wait: (seconds: number) => Promise<unknown>): Promise<string[]> {
  const outputs: string[] = [];
  let out: string[] = [];
  const print = (answer: { data?: unknown; error?: unknown }) => out.push(JSON.stringify(answer.data ?? answer.error));
  const block = () => {
    outputs.push(`${out.join('\n')}\n`);
    out = [];
  };
  const outage = (name: string, down: boolean) => client.POST('/api/v1/sandbox/providers/{name}/outage', { params: { path: { name } }, body: { down } });
  const now = Math.floor(Date.now() / 1000);

  // The wallet starts empty. Fund it with the sandbox helper (test keys only).
  print(await client.GET('/api/v1/wallet'));
  print(await client.POST('/api/v1/sandbox/wallet/fund', { body: { amount: 50_000 } }));
  block();

  // Collect 100.00 GHS from the sandbox success number; the provider calls back 5 s later.
  const charge = await client.POST('/api/v1/charges', { body: { amount: 10_000, currency: 'GHS', channel: 'momo', msisdn: '0551234987' } });
  print(charge);
  await wait(6);
  print(await client.GET('/api/v1/charges/{id}', { params: { path: { id: charge.data!.data.id } } }));
  print(await client.GET('/api/v1/wallet'));
  block();

  // Pay out 20.00 GHS: signed by the client. A retry under the same Idempotency-Key gets the
  // stored answer with Idempotent-Replayed: true, and moves no more money.
  const transfer = { body: { amount: 2_000, currency: 'GHS' as const, channel: 'momo' as const, msisdn: '0551234987' }, params: { header: { 'Idempotency-Key': `tour-transfer-${now}` } } };
  print(await client.POST('/api/v1/transfers', transfer));
  print(await client.GET('/api/v1/wallet'));
  const retry = await client.POST('/api/v1/transfers', transfer);
  out.push(`idempotent-replayed: ${retry.response.headers.get('idempotent-replayed')}`);
  print(await client.GET('/api/v1/wallet'));
  block();

  // Name enquiry: the success number resolves, the insufficient-funds number does not (404), and
  // a GCB account resolves over the bank rail.
  print(await client.POST('/api/v1/resolve/momo-name', { body: { msisdn: '0551234987' } }));
  print(await client.POST('/api/v1/resolve/momo-name', { body: { msisdn: '0551234988' } }));
  print(await client.POST('/api/v1/resolve/bank-name', { body: { account_number: '1000000001', bank_code: '040100' } }));
  block();

  // Failover: 0551234989 times out at MTN MoMo and is served by Hubtel. Then an outage of both
  // momo providers: name enquiry answers 502.
  print(await client.POST('/api/v1/charges', { body: { amount: 5_000, currency: 'GHS', channel: 'momo', msisdn: '0551234989' } }));
  print(await client.GET('/api/v1/sandbox/providers'));
  await outage('mtn-momo', true);
  await outage('hubtel', true);
  print(await client.POST('/api/v1/resolve/momo-name', { body: { msisdn: '0551234987' } }));
  await outage('mtn-momo', false);
  await outage('hubtel', false);
  block();

  // Everything that moved money, newest first, cursor-paginated.
  print(await client.GET('/api/v1/transactions', { params: { query: { page_size: '2' } } }));
  block();

  // Trading: quote a buy of USDT on TRC20 for 1,000.00 GHS and execute it (signed by the client).
  await client.POST('/api/v1/sandbox/wallet/fund', { body: { amount: 200_000 } });
  const buy = await client.POST('/api/v1/trades/quote', { body: { side: 'buy', asset: 'USDT', network: 'TRC20', fiat_amount: 100_000 } });
  print(buy);
  print(await client.POST('/api/v1/trades', { body: { quote_reference: buy.data!.data.reference, delivery_address: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8' } }));
  block();

  // Sell 50 USDC on Solana: pending_payment with a deposit address; simulate the deposit, and
  // after 32 confirmations (0.5 s each) the trade settles.
  const sell = await client.POST('/api/v1/trades/quote', { body: { side: 'sell', asset: 'USDC', network: 'SOL', asset_amount: 50_000_000 } });
  const trade = await client.POST('/api/v1/trades', { body: { quote_reference: sell.data!.data.reference } });
  print(trade);
  const reference = trade.data!.data.reference;
  print(await client.POST('/api/v1/sandbox/deposits', { body: { trade_reference: reference, asset_amount: 50_000_000 } }));
  await wait(17);
  print(await client.GET('/api/v1/trades/{reference}', { params: { path: { reference } } }));
  block();
  return outputs;
}
