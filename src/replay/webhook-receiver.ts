// The replay's local webhook receiver: the merchant endpoint a script's webhooks arrive at.

import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { signWebhook } from '../webhooks/webhook-signer.ts';
import { closeServer, listen } from './local-server.ts';

/** A webhook the local receiver got, verified with the endpoint's secret. */
export interface ReceivedWebhook {
  id: string;
  type: string;
  data: unknown;
  verified: boolean;
  /** What the receiver answered. */
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  /** The endpoint's signing secret, known once the endpoint is registered. */
  secret: string | null;
  received: ReceivedWebhook[];
  /** The first body received for each event id. */
  payloads: Map<string, unknown>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    req.on('error', fail);
  });
}

/** Records every webhook, checks its Standard Webhooks signature, answers `failStatus` to the first `failFirst`. */
export async function startWebhookReceiver(failFirst: number, failStatus: number): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = { url: '', secret: null, received, payloads: new Map(), close: async () => {} };
  const server = createServer(async (req, res) => {
    const raw = await readBody(req).catch(() => '');
    let payload: { id?: unknown; type?: unknown; data?: unknown } = {};
    try {
      payload = JSON.parse(raw) as typeof payload;
    } catch {
      payload = {};
    }
    const id = String(req.headers['webhook-id'] ?? payload.id ?? '');
    const timestamp = Number(req.headers['webhook-timestamp']);
    const signatures = String(req.headers['webhook-signature'] ?? '').split(' ');
    const verified = receiver.secret !== null && Number.isFinite(timestamp) && signatures.includes(signWebhook(receiver.secret, id, timestamp, raw));
    const answered = received.length < failFirst ? failStatus : 200;
    received.push({ id, type: String(payload.type ?? ''), data: payload.data, verified, answered });
    if (!receiver.payloads.has(id)) receiver.payloads.set(id, payload);
    res.writeHead(answered, { 'content-type': 'application/json' }).end(JSON.stringify({ received: answered < 300 }));
  });
  await listen(server);
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  receiver.close = () => closeServer(server);
  return receiver;
}
