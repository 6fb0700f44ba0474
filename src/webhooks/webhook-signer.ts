import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (standardwebhooks.com): the signed content is `${id}.${timestamp}.${body}`,
// the key is the base64 part of `whsec_...`, and webhook-signature carries space-separated
// `v1,<base64 HMAC-SHA256>` entries: two of them while a rotated secret is in its grace period.

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
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
