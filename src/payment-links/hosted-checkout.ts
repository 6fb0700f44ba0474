import express, { type Request, type Response, type Router } from 'express';
import { HTTP_STATUS } from '../http/error-mapper.ts';
import { ok } from '../http/envelope.ts';
import { fieldIssues } from '../http/route.ts';
import { readAssetFile } from '../kernel/asset-file.ts';
import { escapeHtml } from '../kernel/escape-html.ts';
import { NotFoundError, RailyardError, ValidationError, type FieldIssue } from '../kernel/errors.ts';
import type { IdGenerator } from '../kernel/ids.ts';
import { toMajorString } from '../kernel/money.ts';
import { submitOtpBody } from '../collections/collections.schemas.ts';
import type { CheckoutView, PaymentLinkService } from './payment-link-service.ts';
import { payLinkBody, type CheckoutCollection, type PaymentLink } from './payment-links.schemas.ts';
import type { z } from 'zod';

// GET /pay/:slug, the hosted checkout page, and its public JSON endpoints under /pay/:slug/...
// No API key: the link's unguessable slug is the capability, and only that link's collections
// are reachable through it. Plain HTML, CSS and one small script, all served from here.

/** Nothing but railyard itself: no inline script or style, no frames, no third-party anything. */
export const CHECKOUT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface HostedCheckoutDeps {
  links: PaymentLinkService;
  ids: IdGenerator;
}

export function hostedCheckout(deps: HostedCheckoutDeps): Router {
  const router = express.Router();
  const parse = [express.json({ limit: '10kb' }), express.urlencoded({ extended: false, limit: '10kb', parameterLimit: 20 })];

  // The stylesheet and the script are files in assets/ beside this module, which `npm run build`
  // copies to dist/ (a missing one fails here, at start-up).
  const css = readAssetFile(import.meta.url, './assets/checkout.css');
  const js = readAssetFile(import.meta.url, './assets/checkout.js');
  router.get('/pay/_assets/checkout.css', (_req, res) => asset(res, 'text/css; charset=utf-8', css));
  router.get('/pay/_assets/checkout.js', (_req, res) => asset(res, 'text/javascript; charset=utf-8', js));

  // The page itself. Without JavaScript the same form posts here as a plain form and the answers
  // are pages (a 303 to the collection's status page, which refreshes itself while pending).
  router.get('/pay/:slug', async (req, res) => {
    await renderCheckout(res, req.params.slug, 200);
  });

  router.post('/pay/:slug/collections', ...parse, async (req, res) => {
    const slug = req.params.slug as string;
    try {
      const body = parseBody(payLinkBody, req.body);
      const collection = await deps.links.pay(slug, body, req.path);
      if (wantsPage(req)) return void res.redirect(303, `/pay/${encodeURIComponent(slug)}/collections/${encodeURIComponent(collection.id)}`);
      res.status(201).json(ok('Collection started: poll it until it settles or fails', collection));
    } catch (err) {
      if (!wantsPage(req) || !(err instanceof RailyardError)) throw err;
      await renderCheckout(res, slug, HTTP_STATUS[err.code], problemText(err));
    }
  });

  router.get('/pay/:slug/collections/:id', async (req, res) => {
    const collection = await deps.links.collection(req.params.slug, req.params.id).catch((err: unknown) => {
      if (wantsPage(req) && err instanceof NotFoundError) return null;
      throw err;
    });
    if (!wantsPage(req)) return void res.json(ok('Collection', collection));
    await renderStatus(res, req.params.slug, collection);
  });

  router.post('/pay/:slug/collections/:id/otp', ...parse, async (req, res) => {
    const { slug, id } = req.params as { slug: string; id: string };
    try {
      const body = parseBody(submitOtpBody, req.body);
      const collection = await deps.links.submitOtp(slug, id, body.otp);
      if (wantsPage(req)) return void res.redirect(303, `/pay/${encodeURIComponent(slug)}/collections/${encodeURIComponent(id)}`);
      res.json(ok('Collection', collection));
    } catch (err) {
      if (!wantsPage(req) || !(err instanceof RailyardError)) throw err;
      await renderStatus(res, slug, await deps.links.collection(slug, id).catch(() => null), HTTP_STATUS[err.code], problemText(err));
    }
  });

  /** The checkout form, or the page saying why the link takes no payments. */
  async function renderCheckout(res: Response, slug: string, status: number, error?: string): Promise<void> {
    secure(res);
    const view = await findLink(slug);
    if (!view) return notFoundPage(res);
    const { link, merchantName } = view;
    if (link.status !== 'active') {
      res
        .status(410)
        .type('html')
        .send(page(`${link.description} · ${merchantName}`, closedCard('!', CLOSED_TITLE[link.status], CLOSED_TEXT[link.status], merchantName, link)));
      return;
    }
    res
      .status(status)
      .type('html')
      .send(page(`Pay ${merchantName}`, payCard(view, submissionToken(deps.ids), error)));
  }

  /** A collection's progress as a page: it refreshes itself while the customer approves. */
  async function renderStatus(res: Response, slug: string, collection: CheckoutCollection | null, status = 200, error?: string): Promise<void> {
    secure(res);
    const view = await findLink(slug);
    if (!view || !collection) return notFoundPage(res);
    const pending = collection.status === 'pending_approval' && !collection.next_action;
    res
      .status(status)
      .type('html')
      .send(page(`Pay ${view.merchantName}`, statusCard(view, collection, error), pending ? 2 : undefined));
  }

  async function findLink(slug: string): Promise<CheckoutView | null> {
    try {
      return await deps.links.checkout(slug);
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  return router;
}

function notFoundPage(res: Response): void {
  res
    .status(404)
    .type('html')
    .send(page('Payment link not found', closedCard('?', 'This payment link does not exist', 'Check the link you were given, or ask the merchant for a new one.')));
}

/** A browser navigating (a plain form post, a link) rather than the page's script asking for JSON. */
function wantsPage(req: Request): boolean {
  return req.accepts(['application/json', 'text/html']) === 'text/html';
}

/** The refusal in the customer's words: the fields' messages, or the error's own. */
function problemText(err: RailyardError): string {
  const fields = (err.details?.fields as FieldIssue[] | undefined) ?? [];
  return fields.length ? `${fields.map((f) => f.message).join('. ')}.` : err.message;
}

function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const fields = fieldIssues(result.error, 'body');
  throw new ValidationError(`Invalid request body: ${fields.map((f) => `${f.field}: ${f.message}`).join('; ')}`, fields);
}

function secure(res: Response): void {
  res.set({
    'Content-Security-Policy': CHECKOUT_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cache-Control': 'no-store',
  });
}

function asset(res: Response, type: string, text: string): void {
  secure(res);
  res.set('Cache-Control', 'public, max-age=300').type(type).send(text);
}

/** A fresh token per rendered form: the same submission sent twice is one payment. */
function submissionToken(ids: IdGenerator): string {
  let token = 'sub_';
  for (let i = 0; i < 4; i++) token += ids.nextUint32().toString(36).padStart(7, '0');
  return token;
}

const CLOSED_TITLE: Record<Exclude<PaymentLink['status'], 'active'>, string> = {
  expired: 'This payment link has expired',
  deactivated: 'This payment link is no longer available',
  completed: 'This payment link has been fully paid',
};
const CLOSED_TEXT: Record<Exclude<PaymentLink['status'], 'active'>, string> = {
  expired: 'Its time to take payments has passed. Ask the merchant for a new link.',
  deactivated: 'The merchant has turned it off. Ask the merchant for a new link.',
  completed: 'It has reached the number of payments it was made for. Nothing more is due.',
};

function page(title: string, content: string, refreshSeconds?: number): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">\n` : ''}<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/pay/_assets/checkout.css">
</head>
<body>
<main>
${content}
</main>
<footer>Checkout hosted by railyard</footer>
</body>
</html>
`;
}

function head(merchantName: string, link: PaymentLink): string {
  const amount = link.amount_major ? `<p class="amount" id="amount-due"><small>GHS</small>${escapeHtml(link.amount_major)}</p>` : '';
  return `<div class="head">
  <p class="merchant">${escapeHtml(merchantName)}</p>
  <h1>${escapeHtml(link.description)}</h1>
  ${amount}
</div>`;
}

function closedCard(icon: string, title: string, text: string, merchantName?: string, link?: PaymentLink): string {
  return `<div class="card">
${merchantName && link ? head(merchantName, link) : ''}
<div class="body closed" role="alert" id="closed" data-state="${link?.status ?? 'not_found'}">
  <p class="icon" aria-hidden="true">${icon}</p>
  <h2>${escapeHtml(title)}</h2>
  <p>${escapeHtml(text)}</p>
</div>
</div>`;
}

function payCard(view: CheckoutView, submission: string, error?: string): string {
  const { link, merchantName } = view;
  const openAmount =
    link.amount === null
      ? `<div class="field">
    <label for="amount">Amount (GHS)</label>
    <input type="text" id="amount" name="amount" inputmode="decimal" autocomplete="off" required placeholder="0.00" aria-describedby="amount-hint">
    <p class="hint" id="amount-hint">${escapeHtml(amountHint(link))}</p>
  </div>`
      : '';
  const sandbox = link.livemode
    ? ''
    : `<p class="sandbox"><strong>Sandbox.</strong> Mobile money: <code>0551234987</code> pays, <code>0551234988</code> fails (insufficient funds). Card: <code>4084 0840 8408 4081</code> pays, <code>4000 0000 0000 3410</code> asks for OTP <code>123456</code>, <code>4000 0000 0000 9953</code> is declined.</p>`;
  return `<div class="card">
${head(merchantName, link)}
<div class="body">
  ${sandbox}
  <form id="pay-form" method="post" action="/pay/${escapeHtml(link.slug)}/collections" data-slug="${escapeHtml(link.slug)}" novalidate>
    <input type="hidden" name="submission" value="${escapeHtml(submission)}">
    ${openAmount}
    <fieldset>
      <legend>Pay with</legend>
      <div class="channels">
        <div class="channel"><input type="radio" id="channel-momo" name="channel" value="momo" checked><label for="channel-momo">Mobile money</label></div>
        <div class="channel"><input type="radio" id="channel-card" name="channel" value="card"><label for="channel-card">Card</label></div>
      </div>
    </fieldset>
    <div class="field">
      <label for="customer" id="customer-label">Mobile money number</label>
      <input type="text" id="customer" name="customer" inputmode="tel" autocomplete="tel" required aria-describedby="customer-hint">
      <p class="hint" id="customer-hint">MTN, Telecel or AT, e.g. 024 123 4567.</p>
    </div>
    <button type="submit" id="pay-button">Pay${link.amount_major ? ` GHS ${escapeHtml(link.amount_major)}` : ''}</button>
  </form>
  <form id="otp-form" hidden novalidate>
    <p class="otp-intro">Your card issuer needs to confirm this payment.</p>
    <div class="field">
      <label for="otp">One-time password</label>
      <input type="text" id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" required>
    </div>
    <button type="submit" id="otp-button">Confirm payment</button>
  </form>
  ${
    error
      ? `<div id="status" class="status error" role="alert" aria-live="polite" tabindex="-1" data-state="error"><strong>We could not take this payment.</strong> ${escapeHtml(error)}</div>`
      : '<div id="status" class="status" role="status" aria-live="polite" tabindex="-1"></div>'
  }
</div>
</div>
<script src="/pay/_assets/checkout.js" defer></script>`;
}

/** The no-JavaScript status page of a collection paying the link. */
function statusCard(view: CheckoutView, c: CheckoutCollection, error?: string): string {
  const slug = escapeHtml(view.link.slug);
  let body: string;
  if (c.status === 'settled') {
    body = `<div class="status success" role="status" data-state="success"><strong>Payment received.</strong> GHS ${escapeHtml(c.amount_major)} paid. You can close this page.</div>`;
  } else if (c.status === 'failed') {
    body = `<div class="status failed" role="alert" data-state="failed"><strong>Payment failed.</strong> ${escapeHtml(FAILURE_TEXT[c.failure_reason ?? ''] ?? 'The provider refused the payment.')}</div>
  <p><a href="/pay/${slug}">Try again</a></p>`;
  } else if (c.next_action) {
    body = `<form method="post" action="/pay/${slug}/collections/${escapeHtml(c.id)}/otp" novalidate>
    <p class="otp-intro">${escapeHtml(c.next_action.message)}.</p>
    <div class="field">
      <label for="otp">One-time password</label>
      <input type="text" id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" required autofocus>
    </div>
    <button type="submit">Confirm payment</button>
  </form>`;
  } else {
    body = `<div class="status pending" role="status" data-state="pending"><strong>Waiting for your approval.</strong> ${c.channel === 'momo' ? 'Approve the prompt on your phone.' : 'Your bank is confirming the payment.'} This page refreshes by itself.</div>`;
  }
  const problem = error ? `<div class="status error" role="alert" data-state="error"><strong>That did not work.</strong> ${escapeHtml(error)}</div>` : '';
  return `<div class="card">
${head(view.merchantName, { ...view.link, amount_major: c.amount_major })}
<div class="body">
  ${problem}
  ${body}
</div>
</div>`;
}

/** Failure reasons in the customer's words (the page's script has the same list). */
const FAILURE_TEXT: Record<string, string> = {
  insufficient_funds: 'There was not enough money in the account.',
  declined_by_customer: 'The payment was not approved.',
  do_not_honour: 'Your bank declined the card.',
  expired_card: 'The card has expired.',
  invalid_otp: 'The one-time password was not right.',
  account_not_found: 'No account was found for this number.',
  limit_reached: 'The account has reached its limit.',
  expired: 'The approval took too long.',
};

/** What the customer may type on an open link. */
function amountHint(link: PaymentLink): string {
  const min = link.min_amount === null ? null : toMajorString(link.min_amount, 'GHS');
  const max = link.max_amount === null ? null : toMajorString(link.max_amount, 'GHS');
  if (min && max) return `From ${min} to ${max} GHS, up to 2 decimals`;
  if (min) return `At least ${min} GHS, up to 2 decimals`;
  if (max) return `Up to ${max} GHS, up to 2 decimals`;
  return 'Up to 2 decimals, e.g. 25.50';
}
