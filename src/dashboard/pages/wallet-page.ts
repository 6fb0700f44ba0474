import { parseMajorAmount } from '../../kernel/money.ts';
import type { ApiAnswer } from '../dashboard-api.ts';
import { apiProblem, csrfField, money } from '../dashboard-layout.ts';
import { html } from '../html.ts';
import type { DashboardRoutes } from '../page-context.ts';
import { collectionsTable, type CollectionItem } from './collections-table.ts';
import { field, idemField, idemOf } from './form-field.ts';
import { transactionsTable, type TransactionItem } from './transactions-table.ts';

// The wallet: its balances, funding by momo, card or bank, withdrawals (signed), and the recent
// transactions and collections.

/** The wallet page and its funding and withdrawal forms. */
export function walletPage(routes: DashboardRoutes): void {
  // GET /api/v1/wallet, GET /api/v1/transactions, GET /v1/collections
  routes.page('/dashboard/wallet', async (ctx) => {
    const [wallet, recent, collections] = await Promise.all([
      ctx.api.get<{ available: number; reserved: number }>('/api/v1/wallet', {}, ctx.call),
      ctx.api.get<TransactionItem[]>('/api/v1/transactions', { page_size: '10' }, ctx.call),
      ctx.api.get<CollectionItem[]>('/v1/collections', { page_size: '5' }, ctx.call),
    ]);
    const test = ctx.key.environment === 'test';
    const balance = wallet.ok
      ? html`<div class="balances" id="balances">
  <div class="balance"><span>Available</span><strong id="available">${money(wallet.data.available)}</strong></div>
  <div class="balance"><span>Reserved</span><strong id="reserved">${money(wallet.data.reserved)}</strong><small>held for pending withdrawals</small></div>
</div>`
      : apiProblem(wallet, 'The wallet could not be read');
    const hints = test
      ? html`<p class="hint">Sandbox numbers: <code>0551234987</code> succeeds, <code>0551234988</code> fails (insufficient funds), <code>0551234989</code> times out at MTN and fails over to Hubtel.</p>`
      : '';
    ctx.render(
      { title: 'Wallet', page: 'wallet' },
      html`<section class="card">${balance}</section>
<div class="grid">
<section class="card">
  <h2>Fund by mobile money</h2>
  <form method="post" action="/dashboard/wallet/fund" id="fund-momo">
    ${csrfField(ctx.session)}${idemField()}<input type="hidden" name="channel" value="momo">
    <div class="field"><label for="momo-amount">Amount (GHS)</label><input id="momo-amount" name="amount" inputmode="decimal" required placeholder="50.00"></div>
    <div class="field"><label for="momo-msisdn">Mobile money number</label><input id="momo-msisdn" name="msisdn" inputmode="tel" required placeholder="0551234987"></div>
    ${hints}
    <button type="submit" id="fund-momo-submit">Charge the number</button>
  </form>
  <p class="maps">POST /api/v1/charges</p>
</section>
<section class="card">
  <h2>Fund by card</h2>
  <form method="post" action="/dashboard/wallet/fund" id="fund-card">
    ${csrfField(ctx.session)}${idemField()}<input type="hidden" name="channel" value="card">
    <div class="field"><label for="card-amount">Amount (GHS)</label><input id="card-amount" name="amount" inputmode="decimal" required placeholder="50.00"></div>
    <div class="field"><label for="card-number">Card number</label><input id="card-number" name="card" inputmode="numeric" autocomplete="off" required placeholder="4084 0840 8408 4081"></div>
    ${test ? html`<p class="hint">Test cards: <code>4084 0840 8408 4081</code> pays, <code>4000 0000 0000 3410</code> asks for OTP <code>123456</code>.</p>` : ''}
    <button type="submit" id="fund-card-submit">Collect by card</button>
  </form>
  <p class="maps">POST /v1/collections (channel card)</p>
</section>
<section class="card">
  <h2>Fund by bank</h2>
  <form method="post" action="/dashboard/wallet/fund" id="fund-bank">
    ${csrfField(ctx.session)}${idemField()}<input type="hidden" name="channel" value="bank">
    <div class="field"><label for="bank-amount">Amount (GHS)</label><input id="bank-amount" name="amount" inputmode="decimal" required placeholder="50.00"></div>
    <div class="field"><label for="bank-account">Account number</label><input id="bank-account" name="account_number" inputmode="numeric" required placeholder="0012345678"></div>
    <div class="field"><label for="bank-code">Bank code (GhIPSS)</label><input id="bank-code" name="bank_code" inputmode="numeric" required placeholder="040100"></div>
    <button type="submit" id="fund-bank-submit">Collect by bank debit</button>
  </form>
  <p class="maps">POST /v1/collections (channel bank)</p>
</section>
<section class="card">
  <h2>Withdraw</h2>
  <form method="post" action="/dashboard/wallet/withdraw" id="withdraw">
    ${csrfField(ctx.session)}${idemField()}
    <fieldset><legend>To</legend>
      <label class="radio"><input type="radio" name="channel" value="momo" checked> Mobile money</label>
      <label class="radio"><input type="radio" name="channel" value="bank"> Bank account</label>
    </fieldset>
    <div class="field"><label for="wd-amount">Amount (GHS)</label><input id="wd-amount" name="amount" inputmode="decimal" required placeholder="20.00"></div>
    <div class="field"><label for="wd-msisdn">Mobile money number (momo)</label><input id="wd-msisdn" name="msisdn" inputmode="tel" placeholder="0551234987"></div>
    <div class="field"><label for="wd-account">Account number (bank)</label><input id="wd-account" name="account_number" inputmode="numeric"></div>
    <div class="field"><label for="wd-bank">Bank code (bank)</label><input id="wd-bank" name="bank_code" inputmode="numeric" placeholder="040100"></div>
    <div class="field"><label for="wd-name">Account name (bank)</label><input id="wd-name" name="bank_account_name"></div>
    ${ctx.key.signingSecret ? '' : html`<p class="hint warn">Withdrawals are signed requests: sign in again with this key's signing secret to send one.</p>`}
    <button type="submit" id="withdraw-submit">Send transfer</button>
  </form>
  <p class="maps">POST /api/v1/transfers (signed)</p>
</section>
</div>
<section class="card"><h2>Recent transactions</h2>
${recent.ok ? transactionsTable(recent.data, 'recent-transactions') : apiProblem(recent, 'Transactions could not be read')}
<p><a href="/dashboard/objects">All objects →</a></p></section>
<section class="card"><h2>Recent collections (card and bank)</h2>
${collections.ok ? collectionsTable(collections.data, 'recent-collections') : apiProblem(collections, 'Collections could not be read')}</section>`,
    );
  });

  // momo: POST /api/v1/charges; card and bank: POST /v1/collections
  routes.action('/dashboard/wallet/fund', async (ctx) => {
    const channel = field(ctx, 'channel');
    const amount = parseMajorAmount(field(ctx, 'amount'), 'GHS');
    if (!amount.ok) return ctx.done('/dashboard/wallet', { kind: 'error', text: `Amount ${amount.reason}. Nothing was sent.` });
    const call = { ...ctx.call, idempotencyKey: idemOf(ctx) };
    let answer: ApiAnswer<{ id: string; status: string }>;
    if (channel === 'momo') {
      answer = await ctx.api.post('/api/v1/charges', { amount: amount.minor, currency: 'GHS', channel: 'momo', msisdn: field(ctx, 'msisdn') }, call);
    } else if (channel === 'card' || channel === 'bank') {
      const customer = channel === 'card' ? field(ctx, 'card') : { account_number: field(ctx, 'account_number'), bank_code: field(ctx, 'bank_code') };
      answer = await ctx.api.post('/v1/collections', { amount: field(ctx, 'amount'), currency: 'GHS', channel, customer, description: 'Wallet funding from the dashboard' }, call);
    } else {
      return ctx.done('/dashboard/wallet', { kind: 'error', text: 'Choose momo, card or bank.' });
    }
    if (!answer.ok) return ctx.done('/dashboard/wallet', ctx.refusal(answer, 'The funding was refused'));
    ctx.done(`/dashboard/objects/${answer.data.id}`, { kind: 'ok', text: `${answer.data.id} created: ${answer.data.status}. It stays pending until the provider's callback.` });
  });

  // POST /api/v1/transfers, signed with the key's signing secret
  routes.action('/dashboard/wallet/withdraw', async (ctx) => {
    if (!ctx.key.signingSecret) return ctx.done('/dashboard/wallet', { kind: 'error', text: 'Withdrawals are signed: sign in again with the signing secret of this key. Nothing was sent.' });
    const amount = parseMajorAmount(field(ctx, 'amount'), 'GHS');
    if (!amount.ok) return ctx.done('/dashboard/wallet', { kind: 'error', text: `Amount ${amount.reason}. Nothing was sent.` });
    const channel = field(ctx, 'channel') === 'bank' ? 'bank' : 'momo';
    const body =
      channel === 'momo'
        ? { amount: amount.minor, currency: 'GHS', channel, msisdn: field(ctx, 'msisdn') }
        : { amount: amount.minor, currency: 'GHS', channel, account_number: field(ctx, 'account_number'), bank_code: field(ctx, 'bank_code'), bank_account_name: field(ctx, 'bank_account_name') };
    const answer = await ctx.api.post<{ id: string; status: string }>('/api/v1/transfers', body, { ...ctx.call, idempotencyKey: idemOf(ctx), signingSecret: ctx.key.signingSecret });
    if (!answer.ok) return ctx.done('/dashboard/wallet', ctx.refusal(answer, 'The withdrawal was refused'));
    ctx.done(`/dashboard/objects/${answer.data.id}`, { kind: 'ok', text: `${answer.data.id} created: ${answer.data.status}. It stays pending until the provider's callback.` });
  });
}
