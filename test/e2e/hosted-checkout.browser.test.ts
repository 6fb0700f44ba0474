// The hosted checkout page in a real browser: Chromium (/usr/bin/chromium) driven by
// playwright-core pays a payment link end to end, once by mobile money and once by card with an
// OTP, against railyard listening on a free port with a virtual clock the test advances.
// Screenshots of each step go to test-results/screenshots/checkout-*.png, or to docs/img (which
// the docs show) with RAILYARD_UPDATE_DOCS_IMAGES=1, so a test run leaves the checkout clean.
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { launchChromium, screenshotDir, type LaunchedChromium } from '../support/chromium.ts';

const IMG = screenshotDir();

let chromium: LaunchedChromium;
let browser: BrowserContext;
let sb: TestSandbox;
let page: Page;
/** Every request the page made that did not go to railyard: there must be none. */
let elsewhere: string[];

beforeAll(async () => {
  chromium = await launchChromium({ width: 520, height: 820 });
  browser = chromium.browser;
}, 60_000);
afterAll(async () => {
  await chromium?.close();
});

beforeEach(async () => {
  sb = await startTestSandbox();
  page = await browser.newPage();
  elsewhere = [];
  page.on('request', (req) => {
    if (!req.url().startsWith(sb.baseUrl)) elsewhere.push(req.url());
  });
});
afterEach(async () => {
  await page?.close();
  await sb?.close();
});

const createLink = async (body: Record<string, unknown>) => {
  const res = await sb.post('/v1/payment_links', { currency: 'GHS', ...body }, { idempotencyKey: `browser-${Math.random()}` });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; url: string };
};
const status = () => page.locator('#status');
/** The id of the focused element (the tests' tsconfig has no DOM types, so the script is a string). */
const focusedId = () => page.evaluate('document.activeElement && document.activeElement.id');
const linkCollections = (linkId: string) => sb.ry.store.all<{ id: string; status: string }>('SELECT id, status FROM collections WHERE payment_link_id = ?', [linkId]);

/** Advances the virtual clock until the page's live status reaches the state (it polls each second). */
async function untilStatus(state: 'success' | 'failed', advanceSeconds: number): Promise<void> {
  await sb.advance(advanceSeconds);
  await page.locator(`#status[data-state="${state}"]`).waitFor({ timeout: 10_000 });
}

describe('The hosted checkout page in Chromium', () => {
  it('pays a fixed link by mobile money: pending, then success, and the API shows it settled and counted', async () => {
    const link = await createLink({ amount: '110.50', description: 'Kente scarf, handwoven in Bonwire', usage_limit: '5' });
    await page.goto(link.url);
    await expect(page.title()).resolves.toBe('Pay Sandbox Merchant');
    await expect(page.locator('#amount-due').innerText()).resolves.toContain('110.50');
    await page.screenshot({ path: join(IMG, 'checkout-form.png') });

    // Keyboard only: the momo radio is the default; the number field is labelled.
    await page.getByLabel('Mobile money number').fill('0551234987');
    await page.keyboard.press('Enter');
    await status().getByText('Waiting for your approval.').waitFor();
    await expect(status().getAttribute('data-state')).resolves.toBe('pending');
    // Focus moved to the announced status.
    await expect(focusedId()).resolves.toBe('status');
    await page.screenshot({ path: join(IMG, 'checkout-pending.png') });

    await untilStatus('success', 5);
    await expect(status().innerText()).resolves.toMatch(/Payment received/);
    await expect(page.locator('#pay-form').isHidden()).resolves.toBe(true);
    await page.screenshot({ path: join(IMG, 'checkout-success.png') });

    const [collection] = await linkCollections(link.id);
    const viaApi = await sb.get(`/v1/collections/${collection!.id}`);
    expect(viaApi.body.data).toMatchObject({ status: 'settled', channel: 'momo', amount: 11_050, payment_link_id: link.id });
    expect((await sb.get(`/v1/payment_links/${link.id}`)).body.data).toMatchObject({ status: 'active', completed_count: 1 });
    expect(elsewhere).toEqual([]);
  });

  it('pays an open link by card with an OTP, the page asking for it and submitting it', async () => {
    const link = await createLink({ description: 'Donation to the Accra Children’s Library', usage_limit: '1' });
    await page.goto(link.url);
    await page.getByLabel('Amount (GHS)').fill('25.50');
    await page.getByText('Card', { exact: true }).click();
    await page.getByLabel('Card number').fill('4000 0000 0000 3410');
    await page.getByRole('button', { name: /^Pay/ }).click();

    await page.getByLabel('One-time password').waitFor();
    await expect(focusedId()).resolves.toBe('otp');
    await expect(status().innerText()).resolves.toMatch(/One more step\.\s+Enter the one-time password/);
    await page.screenshot({ path: join(IMG, 'checkout-otp.png') });

    await page.getByLabel('One-time password').fill('123456');
    await page.getByRole('button', { name: 'Confirm payment' }).click();
    await page.locator('#status[data-state="success"]').waitFor({ timeout: 10_000 });
    await expect(status().innerText()).resolves.toMatch(/GHS 25\.50 paid/);

    const [collection] = await linkCollections(link.id);
    const viaApi = await sb.get(`/v1/collections/${collection!.id}`);
    expect(viaApi.body.data).toMatchObject({ status: 'settled', channel: 'card', amount: 2_550, customer: { brand: 'visa', last4: '3410' } });
    expect((await sb.get(`/v1/payment_links/${link.id}`)).body.data).toMatchObject({ status: 'completed', completed_count: 1 });
    expect(await sb.events(link.id)).toEqual(['payment_link.completed']);

    // The used-up link now says so.
    const reloaded = await page.goto(link.url);
    expect(reloaded?.status()).toBe(410);
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/fully paid/);
    expect(elsewhere).toEqual([]);
  });

  it('announces a declined payment and lets the customer try again', async () => {
    const link = await createLink({ amount: '40.00', description: 'Bus ticket, Accra to Kumasi' });
    await page.goto(link.url);
    await page.getByLabel('Mobile money number').fill('0551234988');
    await page.getByRole('button', { name: /^Pay/ }).click();
    // The collection exists (the page waits for approval) before the clock moves to its callback.
    await status().getByText('Waiting for your approval.').waitFor();
    await untilStatus('failed', 5);
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/not enough money/);
    await expect(page.getByRole('button', { name: /^Pay/ }).isEnabled()).resolves.toBe(true);
  });

  it('announces invalid input at the field, and changes nothing', async () => {
    const link = await createLink({ amount: '40.00', description: 'Bus ticket' });
    await page.goto(link.url);
    await page.getByLabel('Mobile money number').fill('12345');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await page.locator('#status[data-state="error"]').waitFor();
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/Ghana mobile number/);
    await expect(page.getByLabel('Mobile money number').getAttribute('aria-invalid')).resolves.toBe('true');
    expect(await linkCollections(link.id)).toEqual([]);
  });

  it('shows an expired link as expired (410)', async () => {
    const link = await createLink({ amount: '15.00', description: 'Early-bird ticket, Chale Wote festival', expires_at: '2026-01-01T00:05:00Z' });
    await sb.advance(300);
    const res = await page.goto(link.url);
    expect(res?.status()).toBe(410);
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/expired/);
    await page.screenshot({ path: join(IMG, 'checkout-expired.png') });
  });
});
