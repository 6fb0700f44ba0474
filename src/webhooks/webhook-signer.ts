import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

// Standard Webhooks (standardwebhooks.com): the signed content is `${id}.${timestamp}.${body}`,
// the key is the base64 part of `whsec_...`, and webhook-signature carries space-separated
// `v1,<base64 HMAC-SHA256>` entries: two of them while a rotated secret is in its grace period.

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Signing keys by secret: an advance signs thousands of webhooks with a handful of secrets. */
const keys = new Map<string, KeyObject>();

function keyOf(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= 1_000) keys.clear(); // bounded: secrets rotate
    key = createSecretKey(Buffer.from(secret.replace(/^whsec_/, ''), 'base64'));
    keys.set(secret, key);
  }
  return key;
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export function webhookHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'railyard-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signWebhook(s, id, timestampSeconds, body)).join(' '),
  };
}
