// The dashboard in a real browser: Chromium (/usr/bin/chromium) driven by playwright-core, against
// railyard listening on a free port with a virtual clock. A merchant signs in, funds the wallet
// by momo on the failover number and watches the charge's timeline go from pending to success
// (MTN times out, Hubtel serves it), sees a webhook delivery fail on a receiver answering 500 and
// redelivers it once the receiver recovers, moves the ladder from sandbox to live, and switches to
// a live key that sees no sandbox controls. The steps run in order on one railyard and one browser.
// A screenshot of every page goes to test-results/screenshots/dashboard-*.png, or to docs/img
// (which docs/dashboard.md shows) with RAILYARD_UPDATE_DOCS_IMAGES=1.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxReplays } from '../../src/replay/sandbox-replays.ts';
import { ruleSources } from '../../src/scenarios/scenario-loader.ts';
import { SANDBOX_SCENARIOS, startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';
import { launchChromium, screenshotDir, type LaunchedChromium } from '../support/chromium.ts';
import { loadScenarios } from '../../src/railyard-scenarios.ts';

const IMG = screenshotDir();

let chromium: LaunchedChromium;
let browser: BrowserContext;
let sb: TestSandbox;
let page: Page;
/** Requests the pages made anywhere but railyard: there must be none (no CDN, no fonts). */
const elsewhere: string[] = [];

/** A merchant's webhook receiver that answers 500 until it recovers. */
let receiver: Server;
let receiverUrl: string;
let receiverStatus = 500;
const received: string[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push(body);
      res.writeHead(receiverStatus, { 'content-type': 'text/plain' }).end(receiverStatus === 500 ? 'receiver is down for maintenance' : 'ok');
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
  // A scripted scenario file for the Sandbox page's replays (run in a sandbox of their own).
  const root = resolve(import.meta.dirname, '../..');
  const scripted = loadScenarios([resolve(root, 'scenarios/failover.yaml')], root);
  sb = await startTestSandbox({}, undefined, [], { replays: new SandboxReplays(() => scripted.files, { cwd: root }) });
  // As `railyard serve` loads them: each rule knows its file (the sandbox page lists them by file).
  const loaded = loadScenarios([SANDBOX_SCENARIOS]);
  sb.ry.scenarios.replace(loaded.rules, loaded.wallets, ruleSources(loaded));
  chromium = await launchChromium({ width: 1280, height: 860 });
  browser = chromium.browser;
  page = await browser.newPage();
  browser.on('request', (req) => {
    if (!req.url().startsWith(sb.baseUrl) && !req.url().startsWith('data:')) elsewhere.push(req.url());
  });
}, 60_000);
afterAll(async () => {
  await chromium?.close();
  await sb?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((done) => (receiver ? receiver.close(() => done()) : done()));
});

const shot = (name: string, on: Page = page) => on.screenshot({ path: join(IMG, `dashboard-${name}.png`), fullPage: true });
const nav = (name: string) => page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });

describe('The dashboard in Chromium', () => {
  it('signs in with an API key, which stays out of the URL', async () => {
    await page.goto(`${sb.baseUrl}/dashboard`);
    await expect(page.title()).resolves.toBe('Sign in · railyard dashboard');
    await shot('sign-in');
    // Keyboard only: the key field is labelled, and Enter submits the form.
    await page.getByLabel('API key').fill(sb.key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Service ladder' }).waitFor();
    expect(page.url()).toBe(`${sb.baseUrl}/dashboard`);
    await expect(page.getByRole('status').first().innerText()).resolves.toMatch(/Signed in with a test key/);
    // The message of the action takes focus, so it is read out.
    await expect(page.evaluate('document.activeElement && document.activeElement.id')).resolves.toBe('flash');
    await expect(page.locator('#stage').innerText()).resolves.toBe('sandbox');
    await shot('ladder');
  });

  it('creates a webhook endpoint, its secret shown once', async () => {
    await nav('Webhooks').click();
    await page.getByText('Add an endpoint').click();
    await page.getByLabel('URL').fill(receiverUrl);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await expect(page.locator('#new-secret').innerText()).resolves.toMatch(/^whsec_/);
    await page.getByRole('link', { name: 'Back to webhooks' }).click();
    await expect(page.locator('#endpoints').innerText()).resolves.toContain(receiverUrl);
    await expect(page.locator('body').innerText()).resolves.not.toMatch(/whsec_/);
  });

  it('funds the wallet by momo on the failover number: pending, then success on the live timeline, with the failover visible', async () => {
    await nav('Wallet').click();
    await page.getByLabel('Amount (GHS)').first().fill('50.00');
    await page.getByLabel('Mobile money number', { exact: true }).fill('0551234989');
    await page.getByRole('button', { name: 'Charge the number' }).click();
    await page.waitForURL(/\/dashboard\/objects\/chg_/);
    const chargeId = page.url().split('/').pop()!;
    await expect(page.locator('#object-status [data-status]').getAttribute('data-status')).resolves.toBe('pending_provider');
    // MTN timed out and Hubtel took the charge: the timeline says so before any callback.
    await page.locator('#timeline [data-kind="failover"]').first().waitFor();
    await expect(page.locator('#timeline').innerText()).resolves.toMatch(/mtn-momo/);
    await expect(page.locator('#timeline').innerText()).resolves.toMatch(/hubtel/);
    await page.locator('body[data-live="connected"]').waitFor();

    // The clock moves in another tab (the sandbox page); this page updates by itself.
    const sandboxTab = await browser.newPage();
    await sandboxTab.goto(`${sb.baseUrl}/dashboard/sandbox`);
    await sandboxTab.getByRole('button', { name: '+1 min' }).click();
    await sandboxTab.getByRole('status').filter({ hasText: 'Advanced 60 s' }).waitFor();
    await shot('sandbox', sandboxTab);
    await sandboxTab.close();

    await page.locator('#object-status [data-status="success"]').waitFor({ timeout: 10_000 });
    await page.locator('#timeline [data-kind="callback"]').first().waitFor();
    await page.locator('#timeline [data-kind="journal"]').first().waitFor();
    await shot('object');
    expect((await sb.get(`/api/v1/charges/${chargeId}`)).body.data).toMatchObject({ status: 'success', provider: 'hubtel' });

    // The wallet holds the charge, less its fee.
    await nav('Wallet').click();
    await expect(page.locator('#available').innerText()).resolves.toBe('GHS 49.50');
    await expect(page.locator('#recent-transactions').innerText()).resolves.toContain(chargeId);
    await shot('wallet');
  });

  it('lists the objects with their filters', async () => {
    await nav('Objects').click();
    await page.locator('#object-list').getByRole('link').first().waitFor();
    await shot('objects');
    await page.getByRole('link', { name: 'Charges', exact: true }).click();
    await expect(page.locator('#object-list').innerText()).resolves.toMatch(/charge\s+credit\s+success/);
  });

  it('lists the quotes on their own tab, filtered by side, each opening its page', async () => {
    const quoted: string[] = [];
    for (const side of ['buy', 'sell'] as const) quoted.push((await sb.post('/api/v1/trades/quote', { side, asset: 'USDT', network: 'TRC20', fiat_amount: 25_000 })).body.data.reference);
    await page.getByRole('link', { name: 'Quotes', exact: true }).click();
    await expect(page.locator('#object-list').innerText()).resolves.toContain(quoted[1]);
    await page.getByLabel('Side').selectOption('buy');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/side=buy/);
    await expect(page.locator('#object-list').innerText()).resolves.not.toContain(quoted[1]);
    await page.getByLabel('Side').selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((url) => !url.search.includes('side=buy'));
    await shot('quotes');
    await page.getByRole('link', { name: quoted[0]! }).click();
    await page.waitForURL(new RegExp(`/dashboard/objects/${quoted[0]}$`));
    await page.locator('#timeline').waitFor();
  });

  it('shows the delivery failing on the receiver that answers 500, then redelivers it once the receiver recovers', async () => {
    await nav('Webhooks').click();
    await page.locator('[data-http-status="500"]').first().waitFor();
    await expect(page.locator('#delivery-log').innerText()).resolves.toMatch(/receiver is down for maintenance/);

    receiverStatus = 200;
    const failing = page.locator('.delivery', { has: page.locator('[data-http-status="500"]') }).first();
    const deliveryId = (await failing.getAttribute('id'))!.replace('delivery-', '');
    await failing.getByRole('button', { name: 'Redeliver' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Redelivered ${deliveryId}: 200` })
      .waitFor();
    const redelivered = page.locator(`#delivery-${deliveryId}`);
    await expect(redelivered.getAttribute('data-status')).resolves.toBe('delivered');
    await expect(redelivered.locator('[data-http-status="200"]').count()).resolves.toBe(1);
    await shot('webhooks');
    const viaApi = (await sb.get(`/api/v1/webhook_deliveries/${deliveryId}`)).body.data;
    expect(viaApi.status).toBe('delivered');
    expect(viaApi.attempt_log.at(-1)).toMatchObject({ trigger: 'redelivery', http_status: 200 });
  });

  it('inspects the requests, with the scenario rule each mock call matched', async () => {
    await nav('Requests').click();
    await expect(page.locator('#request-log').innerText()).resolves.toMatch(/POST \/api\/v1\/charges/);
    await page.getByLabel('Kind').selectOption('mock');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/kind=mock/);
    // The MTN call that timed out names the scenario rule that made it time out.
    const mtn = page.locator('#request-log tr', { hasText: 'provider mock · mtn-momo' }).filter({ hasText: 'requesttopay' });
    await expect(mtn.first().innerText()).resolves.toMatch(/matched .*sandbox\.yaml.*0551234989 times out/s);
    await shot('requests');
  });

  it("replays a scenario file's script from the Sandbox page and shows its steps and timeline", async () => {
    await nav('Sandbox').click();
    await page.getByLabel('Scenario file').selectOption('scenarios/failover.yaml');
    await page.getByRole('button', { name: 'Run the replay' }).click();
    await page.getByRole('status').filter({ hasText: 'The replay of scenarios/failover.yaml passed' }).waitFor({ timeout: 30_000 });
    await expect(page.locator('#replay-result').getAttribute('data-replay-status')).resolves.toBe('passed');
    await expect(page.locator('#replay-timeline').innerText()).resolves.toMatch(/hubtel/);
    await page.locator('#replays').scrollIntoViewIfNeeded();
    await shot('replay');
  });

  it('shows the keys and the signing scheme on the developers page', async () => {
    await nav('Developers').click();
    await page.locator('#keys').waitFor();
    await expect(page.locator('#signing-example').innerText()).resolves.toMatch(/openssl dgst -sha256 -hmac/);
    await shot('developers');
  });

  it('advances the clock in the background from the Sandbox page and shows its progress to the end', async () => {
    await page.goto(`${sb.baseUrl}/dashboard/sandbox`);
    await page.getByLabel('In the background, with progress').check();
    await page.locator('#advance-seconds').fill('600');
    await page.locator('#advance-submit').click();
    await page.getByRole('status').filter({ hasText: 'Advancing 600 s in the background' }).waitFor();
    await page.locator('#advance-progress [data-advance-state=succeeded]').waitFor();
    const bar = page.locator('#advance-bar');
    await expect(bar.getAttribute('value')).resolves.toBe(await bar.getAttribute('max'));
  });

  it('moves the ladder from sandbox to live', async () => {
    await nav('Service ladder').click();
    await page.getByRole('button', { name: 'Go live' }).click();
    await page.getByRole('status').filter({ hasText: 'Stage is now live' }).waitFor();
    await expect(page.locator('#stage').innerText()).resolves.toBe('live');
    expect((await sb.get('/api/v1/merchant')).body.data.stage).toBe('live');
  });

  it('switches to a live key, which sees the LIVE banner and no sandbox controls', async () => {
    await nav('Developers').click();
    await page.getByLabel('Key environment').selectOption('live');
    await page.getByRole('button', { name: 'Issue key' }).click();
    const liveKey = await page.locator('#issued-key').innerText();
    expect(liveKey).toMatch(/^sk_live_/);

    await page.getByRole('button', { name: 'Live', exact: true }).click();
    await page.waitForURL(/\/dashboard\/sign-in\?mode=live$/);
    await page.getByLabel('API key').fill(liveKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Service ladder' }).waitFor();
    await expect(page.locator('#live-banner').innerText()).resolves.toMatch(/LIVE — real money/);
    await expect(page.locator('body').getAttribute('class')).resolves.toBe('mode-live');
    await expect(nav('Sandbox').count()).resolves.toBe(0);
    await shot('live');

    const res = await page.goto(`${sb.baseUrl}/dashboard/sandbox`);
    expect(res?.status()).toBe(403);
    await expect(page.getByRole('alert').innerText()).resolves.toMatch(/not available in live mode/);
    await expect(page.locator('#advance-form').count()).resolves.toBe(0);

    // Back to test: the session kept the test key.
    await page.goto(`${sb.baseUrl}/dashboard`);
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await expect(nav('Sandbox').count()).resolves.toBe(1);
    expect(elsewhere).toEqual([]);
  });
});
