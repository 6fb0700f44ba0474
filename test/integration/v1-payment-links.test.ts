import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHECKOUT_CSP } from '../../src/payment-links/hosted-checkout.ts';
import { expectBalanced, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

let keys = 0;
const createLink = (body: Record<string, unknown>, idempotencyKey = `plink-test-${++keys}`) => sb.post('/v1/payment_links', body, { idempotencyKey });
const fixed = (extra: Record<string, unknown> = {}) => ({ amount: '110.50', currency: 'GHS', description: 'Kente scarf', ...extra });
const link = async (extra: Record<string, unknown> = {}) => {
  const res = await createLink(fixed(extra));
  expect(res.status).toBe(201);
  return res.body.data as { id: string; slug: string; url: string; status: string };
};
let submissions = 0;
/** What the hosted page's script posts: no API key, a fresh submission token per form. */
const pay = (slug: string, body: Record<string, unknown>, submission = `sub_test_${++submissions}`) => sb.http.post(`/pay/${slug}/collections`).send({ submission, ...body });
const links = () => sb.ry.store.all('SELECT * FROM payment_links');
const collections = () => sb.ry.store.all('SELECT * FROM collections');

describe('POST /v1/payment_links', () => {
  it('creates a fixed-amount link: 201, plink_ id, a slug and the hosted page url', async () => {
    const res = await createLink(fixed({ usage_limit: 3 }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: true, message: expect.stringMatching(/created/i) });
    const data = res.body.data;
    expect(data).toEqual({
      id: expect.stringMatching(/^plink_[0-9a-z]{20}$/),
      object: 'payment_link',
      status: 'active',
      slug: expect.stringMatching(/^[0-9a-z]{16}$/),
      url: `${sb.baseUrl}/pay/${data.slug}`,
      amount: 11_050,
      amount_major: '110.50',
      min_amount: null,
      max_amount: null,
      currency: 'GHS',
      fees: 0,
      description: 'Kente scarf',
      expires_at: null,
      usage_limit: 3,
      completed_count: 0,
      livemode: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it('creates an open-amount link when amount is left out', async () => {
    const res = await createLink({ currency: 'GHS', description: 'Donations' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: null, amount_major: null, usage_limit: null, status: 'active' });
  });

  it('bounds an open amount with min_amount and max_amount', async () => {
    const res = await createLink({ currency: 'GHS', description: 'School fees', min_amount: '10', max_amount: '500.00' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: null, min_amount: 1_000, max_amount: 50_000 });
  });

  it('takes a form-encoded body, like every /v1 POST', async () => {
    const res = await sb.http
      .post('/v1/payment_links')
      .set('Authorization', `Bearer ${sb.key}`)
      .set('Idempotency-Key', 'plink-form')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send('amount=25.5&currency=GHS&description=Jollof%20for%20two&usage_limit=2&expires_at=2026-02-01T00%3A00%3A00Z');
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: 2_550, amount_major: '25.50', description: 'Jollof for two', usage_limit: 2, expires_at: '2026-02-01T00:00:00.000Z' });
  });

  it.each([
    ['an amount with 3 decimals', fixed({ amount: '110.505' }), 'amount'],
    ['an amount in exponent notation', fixed({ amount: '1e3' }), 'amount'],
    ['a zero amount', fixed({ amount: '0' }), 'amount'],
    ['an amount as a JSON number', fixed({ amount: 110.5 }), 'amount'],
    ['a currency other than GHS', fixed({ currency: 'NGN' }), 'currency'],
    ['no description', { amount: '1.00', currency: 'GHS' }, 'description'],
    ['a blank description', fixed({ description: '   ' }), 'description'],
    ['a usage_limit of 0', fixed({ usage_limit: '0' }), 'usage_limit'],
    ['a fractional usage_limit', fixed({ usage_limit: '1.5' }), 'usage_limit'],
    ['an expires_at without an offset', fixed({ expires_at: '2026-02-01T00:00:00' }), 'expires_at'],
    ['an expires_at that is not a time', fixed({ expires_at: 'tomorrow' }), 'expires_at'],
    ['an expires_at in the past of the business clock', fixed({ expires_at: '2025-12-31T23:59:59Z' }), 'expires_at'],
    ['an unknown field', fixed({ colour: 'gold' }), 'colour'],
    ['a min_amount on a fixed amount', fixed({ min_amount: '1.00' }), 'min_amount'],
    ['a max_amount of 3 decimals', { currency: 'GHS', description: 'Open', max_amount: '1.005' }, 'max_amount'],
    ['a max_amount below the min_amount', { currency: 'GHS', description: 'Open', min_amount: '20.00', max_amount: '10.00' }, 'max_amount'],
  ])('refuses %s with validation_error naming the field, and stores nothing', async (_name, body, field) => {
    const res = await createLink(body);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: false, error: { code: 'validation_error' } });
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(await links()).toHaveLength(0);
  });

  it('requires an Idempotency-Key, and replays the answer for the same key', async () => {
    const missing = await sb.post('/v1/payment_links', fixed());
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.fields).toEqual([expect.objectContaining({ field: 'Idempotency-Key' })]);
    const first = await createLink(fixed(), 'same');
    const again = await createLink(fixed(), 'same');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await links()).toHaveLength(1);
  });

  it('requires the collections:write scope', async () => {
    const readOnly = (await sb.post('/api/v1/sandbox/keys', { environment: 'test', scopes: ['read'] })).body.data.key as string;
    const res = await sb.post('/v1/payment_links', fixed(), { key: readOnly, idempotencyKey: 'ro' });
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'forbidden', details: { required_scope: 'collections:write' } });
  });
});

describe('GET /v1/payment_links and /v1/payment_links/:id', () => {
  it('lists newest first with cursor paging, and filters by state', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await link({ description: `Item ${i}` }));
    await sb.post(`/v1/payment_links/${created[1]!.id}/deactivate`, {});
    const first = await sb.get('/v1/payment_links?page_size=2');
    expect(first.status).toBe(200);
    expect(first.body.data.map((l: { id: string }) => l.id)).toEqual([created[4]!.id, created[3]!.id]);
    const second = await sb.get(`/v1/payment_links?page_size=2&cursor=${first.body.meta.next_cursor}`);
    expect(second.body.data.map((l: { id: string }) => l.id)).toEqual([created[2]!.id, created[1]!.id]);
    const third = await sb.get(`/v1/payment_links?page_size=2&cursor=${second.body.meta.next_cursor}`);
    expect(third.body.data.map((l: { id: string }) => l.id)).toEqual([created[0]!.id]);
    expect(third.body.meta.next_cursor).toBeNull();

    const deactivated = await sb.get('/v1/payment_links?status=deactivated');
    expect(deactivated.body.data.map((l: { id: string }) => l.id)).toEqual([created[1]!.id]);
    expect((await sb.get('/v1/payment_links?status=active')).body.data).toHaveLength(4);
  });

  it('refuses an unknown status filter or a forged cursor', async () => {
    const status = await sb.get('/v1/payment_links?status=paused');
    expect(status.status).toBe(400);
    expect(status.body.error.details.fields).toEqual([expect.objectContaining({ field: 'query.status' })]);
    const cursor = await sb.get('/v1/payment_links?cursor=nonsense');
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.details.fields).toEqual([expect.objectContaining({ field: 'query.cursor' })]);
  });

  it('retrieves a link by id; an unknown id, or another environment, is 404 not_found', async () => {
    const created = await link();
    const res = await sb.get(`/v1/payment_links/${created.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: created.id, status: 'active' });
    const unknown = await sb.get('/v1/payment_links/plink_nothing');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'not_found', details: { id: 'plink_nothing' } });
    const live = (await sb.post('/api/v1/sandbox/keys', { environment: 'live', scopes: ['read'] })).body.data.key as string;
    expect((await sb.get(`/v1/payment_links/${created.id}`, live)).status).toBe(404);
  });

  it('shows an active link as expired once the business clock passes expires_at', async () => {
    const created = await link({ expires_at: '2026-01-01T00:10:00Z' });
    expect(created.status).toBe('active');
    await sb.advance(600);
    expect((await sb.get(`/v1/payment_links/${created.id}`)).body.data.status).toBe('expired');
    expect((await sb.get('/v1/payment_links?status=expired')).body.data.map((l: { id: string }) => l.id)).toEqual([created.id]);
    expect((await sb.get('/v1/payment_links?status=active')).body.data).toHaveLength(0);
  });
});

describe('POST /v1/payment_links/:id/deactivate', () => {
  it('deactivates an active link; doing it again changes nothing', async () => {
    const created = await link();
    const res = await sb.post(`/v1/payment_links/${created.id}/deactivate`, {});
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('deactivated');
    const again = await sb.post(`/v1/payment_links/${created.id}/deactivate`, {});
    expect(again.body.data).toEqual(res.body.data);
  });

  it('is 404 for an unknown link', async () => {
    const res = await sb.post('/v1/payment_links/plink_nothing/deactivate', {});
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });
});

describe('GET /pay/:slug, the hosted checkout page', () => {
  it('serves the page with the merchant, description and amount, labelled inputs and a strict CSP', async () => {
    const created = await link();
    const res = await sb.http.get(`/pay/${created.slug}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe(CHECKOUT_CSP);
    expect(res.text).toContain('Sandbox Merchant');
    expect(res.text).toContain('Kente scarf');
    expect(res.text).toContain('110.50');
    expect(res.text).toContain('<label for="customer"');
    expect(res.text).toContain('aria-live="polite"');
    // Nothing from elsewhere: every script and stylesheet is railyard's own.
    expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(res.text).not.toMatch(/<script>(?!<)/);
    const js = await sb.http.get('/pay/_assets/checkout.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect((await sb.http.get('/pay/_assets/checkout.css')).status).toBe(200);
  });

  it('asks for the amount on an open-amount link', async () => {
    const res = await createLink({ currency: 'GHS', description: 'Church offering' });
    const page = await sb.http.get(`/pay/${res.body.data.slug}`);
    expect(page.text).toContain('<label for="amount">Amount (GHS)</label>');
  });

  it('answers an unknown slug with a 404 page', async () => {
    const res = await sb.http.get('/pay/nosuchlink');
    expect(res.status).toBe(404);
    expect(res.text).toContain('This payment link does not exist');
  });

  it('answers an expired, a deactivated and a completed link with a 410 page saying so', async () => {
    const expiring = await link({ expires_at: '2026-01-01T00:01:00Z' });
    const off = await link();
    await sb.post(`/v1/payment_links/${off.id}/deactivate`, {});
    const once = await link({ usage_limit: 1 });
    expect((await pay(once.slug, { channel: 'momo', customer: '0551234987' })).status).toBe(201);
    await sb.advance(60);

    const cases = [
      [expiring.slug, 'This payment link has expired'],
      [off.slug, 'This payment link is no longer available'],
      [once.slug, 'This payment link has been fully paid'],
    ] as const;
    for (const [slug, message] of cases) {
      const res = await sb.http.get(`/pay/${slug}`);
      expect(res.status).toBe(410);
      expect(res.text).toContain(message);
      expect(res.text).toContain('role="alert"');
      expect(res.text).not.toContain('id="pay-form"');
    }
  });
});

describe('Paying a link on its public endpoints', () => {
  it('creates a real collection in the link merchant, settles it, and counts the use', async () => {
    const created = await link({ usage_limit: 2 });
    const res = await pay(created.slug, { channel: 'momo', customer: '0551234987' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: true });
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^col_/),
      status: 'pending_approval',
      amount: 11_050,
      amount_major: '110.50',
      currency: 'GHS',
      channel: 'momo',
      next_action: null,
      failure_reason: null,
    });
    const colId = res.body.data.id;
    const viaApi = (await sb.get(`/v1/collections/${colId}`)).body.data;
    expect(viaApi).toMatchObject({ payment_link_id: created.id, description: 'Kente scarf', customer: { msisdn: '233551234987' } });

    await sb.advance(5);
    const settled = await sb.http.get(`/pay/${created.slug}/collections/${colId}`);
    expect(settled.status).toBe(200);
    expect(settled.body.data.status).toBe('settled');
    expect((await sb.get(`/v1/payment_links/${created.id}`)).body.data).toMatchObject({ status: 'active', completed_count: 1 });
    expect(await sb.wallet()).toMatchObject({ available: 11_050 - viaApi.fees });
    expectBalanced(await sb.trialBalance());
  });

  it('is listed in /api/v1/transactions like any collection', async () => {
    const created = await link();
    const paid = await pay(created.slug, { channel: 'momo', customer: '0551234987' });
    const listed = (await sb.get('/api/v1/transactions?type=collection')).body.data as { id: string }[];
    expect(listed.find((item) => item.id === paid.body.data.id)).toMatchObject({
      type: 'collection',
      direction: 'credit',
      status: 'pending_approval',
      amount: paid.body.data.amount,
      channel: 'momo',
      fees: (await sb.get(`/v1/collections/${paid.body.data.id}`)).body.data.fees,
    });
  });

  it('takes the amount the customer typed on an open link', async () => {
    const open = (await createLink({ currency: 'GHS', description: 'Tips' })).body.data;
    const res = await pay(open.slug, { channel: 'momo', customer: '0551234987', amount: '12.30' });
    expect(res.status).toBe(201);
    expect(res.body.data.amount).toBe(1_230);
  });

  it("holds the typed amount to the link's bounds, and the page says what they are", async () => {
    const open = (await createLink({ currency: 'GHS', description: 'School fees', min_amount: '10.00', max_amount: '500.00' })).body.data;
    expect((await sb.http.get(`/pay/${open.slug}`)).text).toContain('From 10.00 to 500.00 GHS');
    const low = await pay(open.slug, { channel: 'momo', customer: '0551234987', amount: '9.99' });
    expect(low.status).toBe(400);
    expect(low.body.error.details.fields).toEqual([{ field: 'amount', message: 'amount must be at least 10.00 GHS' }]);
    const high = await pay(open.slug, { channel: 'momo', customer: '0551234987', amount: '500.01' });
    expect(high.body.error.details.fields).toEqual([{ field: 'amount', message: 'amount must be at most 500.00 GHS' }]);
    expect(await collections()).toHaveLength(0);
    expect((await pay(open.slug, { channel: 'momo', customer: '0551234987', amount: '500.00' })).status).toBe(201);
  });

  it('takes a form-encoded body too', async () => {
    const created = await link();
    const res = await sb.http.post(`/pay/${created.slug}/collections`).type('form').send('channel=momo&customer=0551234987&submission=sub_form_0001');
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe('pending_approval');
  });

  it.each([
    ['an open link without an amount', 'open', { channel: 'momo', customer: '0551234987' }, 'amount'],
    ['an open link with amount "1e3"', 'open', { channel: 'momo', customer: '0551234987', amount: '1e3' }, 'amount'],
    ['an open link with amount " 5"', 'open', { channel: 'momo', customer: '0551234987', amount: ' 5' }, 'amount'],
    ['a fixed link with an amount', 'fixed', { channel: 'momo', customer: '0551234987', amount: '1.00' }, 'amount'],
    ['a number that is not Ghanaian', 'fixed', { channel: 'momo', customer: '12345' }, 'customer'],
    ['a card failing the Luhn check', 'fixed', { channel: 'card', customer: '4242 4242 4242 4241' }, 'customer'],
    ['a bank channel, which the page does not offer', 'fixed', { channel: 'bank', customer: '1000000001' }, 'channel'],
    ['no submission token', 'fixed', { channel: 'momo', customer: '0551234987', submission: undefined }, 'submission'],
    ['an unknown field', 'fixed', { channel: 'momo', customer: '0551234987', tip: '5' }, 'tip'],
  ])('refuses %s with validation_error naming the field, and collects nothing', async (_name, kind, body, field) => {
    const target = kind === 'open' ? (await createLink({ currency: 'GHS', description: 'Open' })).body.data : await link();
    const res = await sb.http.post(`/pay/${target.slug}/collections`).send({ submission: 'sub_validation', ...body });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: false, error: { code: 'validation_error' } });
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
    expect(await collections()).toHaveLength(0);
  });

  it('pays once when the same submission is sent twice (a double click)', async () => {
    const created = await link();
    const first = await pay(created.slug, { channel: 'momo', customer: '0551234987' }, 'sub_double_click');
    const second = await pay(created.slug, { channel: 'momo', customer: '0551234987' }, 'sub_double_click');
    expect(second.status).toBe(201);
    expect(second.body.data.id).toBe(first.body.data.id);
    expect(await collections()).toHaveLength(1);
  });

  it('refuses an unknown slug with not_found', async () => {
    const res = await pay('nosuchlink', { channel: 'momo', customer: '0551234987' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('not_found');
  });

  it('refuses an expired link with payment_link_inactive, state expired', async () => {
    const created = await link({ expires_at: '2026-01-01T00:01:00Z' });
    await sb.advance(60);
    const res = await pay(created.slug, { channel: 'momo', customer: '0551234987' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: false, error: { code: 'payment_link_inactive', details: { payment_link_id: created.id, state: 'expired' } } });
    expect(await collections()).toHaveLength(0);
  });

  it('refuses a deactivated link with payment_link_inactive, state deactivated', async () => {
    const created = await link();
    await sb.post(`/v1/payment_links/${created.id}/deactivate`, {});
    const res = await pay(created.slug, { channel: 'momo', customer: '0551234987' });
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'payment_link_inactive', details: { payment_link_id: created.id, state: 'deactivated' } });
    expect(await collections()).toHaveLength(0);
  });

  it('refuses an exhausted link with payment_link_inactive, state completed, and emits payment_link.completed once', async () => {
    const created = await link({ usage_limit: 2 });
    // A failed payment is no use of the link.
    expect((await pay(created.slug, { channel: 'momo', customer: '0551234988' })).status).toBe(201);
    expect((await pay(created.slug, { channel: 'momo', customer: '0551234987' })).status).toBe(201);
    await sb.advance(5);
    expect((await sb.get(`/v1/payment_links/${created.id}`)).body.data).toMatchObject({ status: 'active', completed_count: 1 });
    expect(await sb.events(created.id)).toEqual([]);

    expect((await pay(created.slug, { channel: 'momo', customer: '0551234987' })).status).toBe(201);
    await sb.advance(5);
    expect((await sb.get(`/v1/payment_links/${created.id}`)).body.data).toMatchObject({ status: 'completed', completed_count: 2 });
    expect(await sb.events(created.id)).toEqual(['payment_link.completed']);

    const res = await pay(created.slug, { channel: 'momo', customer: '0551234987' });
    expect(res.status).toBe(409);
    expect(res.body.error).toEqual({ code: 'payment_link_inactive', details: { payment_link_id: created.id, state: 'completed' } });
    expect(await collections()).toHaveLength(3);
    // Deactivating a completed link leaves it completed.
    expect((await sb.post(`/v1/payment_links/${created.id}/deactivate`, {})).body.data.status).toBe('completed');
  });

  it('shows a link only its own collections', async () => {
    const a = await link();
    const b = await link();
    const paid = await pay(a.slug, { channel: 'momo', customer: '0551234987' });
    const direct = await sb.post('/v1/collections', { amount: '5.00', currency: 'GHS', channel: 'momo', customer: '0551234987' }, { idempotencyKey: 'direct' });
    const other = await sb.http.get(`/pay/${b.slug}/collections/${paid.body.data.id}`);
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('not_found');
    expect((await sb.http.get(`/pay/${a.slug}/collections/${direct.body.data.id}`)).status).toBe(404);
    expect((await sb.http.post(`/pay/${b.slug}/collections/${paid.body.data.id}/otp`).send({ otp: '123456' })).status).toBe(404);
  });

  it('refuses a malformed OTP with validation_error naming otp', async () => {
    const created = await link();
    const paid = await pay(created.slug, { channel: 'momo', customer: '0551234987' });
    const res = await sb.http.post(`/pay/${created.slug}/collections/${paid.body.data.id}/otp`).send({ otp: 'abc' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual([expect.objectContaining({ field: 'otp' })]);
  });
});

describe('The hosted page without JavaScript', () => {
  const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
  const postForm = (path: string, form: string) => sb.http.post(path).set('Accept', HTML).type('form').send(form);

  it('posts the form, redirects to a status page that refreshes while pending, then shows the payment received', async () => {
    const created = await link();
    const res = await postForm(`/pay/${created.slug}/collections`, 'submission=sub_nojs_0001&channel=momo&customer=0551234987');
    expect(res.status).toBe(303);
    const [collection] = await collections();
    const location = `/pay/${created.slug}/collections/${(collection as { id: string }).id}`;
    expect(res.headers.location).toBe(location);

    const pending = await sb.http.get(location).set('Accept', HTML);
    expect(pending.status).toBe(200);
    expect(pending.headers['content-security-policy']).toBe(CHECKOUT_CSP);
    expect(pending.text).toContain('Waiting for your approval');
    expect(pending.text).toContain('<meta http-equiv="refresh" content="2">');

    await sb.advance(5);
    const settled = await sb.http.get(location).set('Accept', HTML);
    expect(settled.text).toContain('Payment received.');
    expect(settled.text).not.toContain('http-equiv="refresh"');
  });

  it('shows a refused field on the form again, as an alert, and collects nothing', async () => {
    const created = await link();
    const res = await postForm(`/pay/${created.slug}/collections`, 'submission=sub_nojs_0002&channel=momo&customer=12345');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('role="alert"');
    expect(res.text).toContain('customer must be a Ghana mobile number');
    expect(res.text).toContain('id="pay-form"');
    expect(await collections()).toHaveLength(0);
  });

  it('answers a form post to a deactivated link with the page saying so', async () => {
    const created = await link();
    await sb.post(`/v1/payment_links/${created.id}/deactivate`, {});
    const res = await postForm(`/pay/${created.slug}/collections`, 'submission=sub_nojs_0003&channel=momo&customer=0551234987');
    expect(res.status).toBe(410);
    expect(res.text).toContain('This payment link is no longer available');
    expect(await collections()).toHaveLength(0);
  });

  it('asks for the OTP on the status page and takes it as a form', async () => {
    const created = await link();
    const res = await postForm(`/pay/${created.slug}/collections`, 'submission=sub_nojs_0004&channel=card&customer=4000000000003410');
    expect(res.status).toBe(303);
    const otpStep = await sb.http.get(res.headers.location!).set('Accept', HTML);
    expect(otpStep.text).toContain('<label for="otp">One-time password</label>');
    const submitted = await postForm(`${res.headers.location}/otp`, 'otp=123456');
    expect(submitted.status).toBe(303);
    const done = await sb.http.get(res.headers.location!).set('Accept', HTML);
    expect(done.text).toContain('Payment received.');
    expect((await sb.get(`/v1/payment_links/${created.id}`)).body.data.completed_count).toBe(1);
  });
});
