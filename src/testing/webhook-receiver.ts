import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { safeEqual } from '../kernel/secrets.ts';

// The merchant's webhook endpoint in a test: a small HTTP server in the test's own process that
// checks each delivery's Standard Webhooks signature, as a merchant's handler must, and keeps the
// events per merchant so a test can wait for the one it expects.

/** An event as railyard delivers it. */
export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  type: string;
  created_at: string;
  livemode: boolean;
  data: { object: T };
}

export interface WaitForOptions {
  /** Real milliseconds to wait before failing (default 5000). */
  timeout?: number;
}

/** One merchant's deliveries. */
export interface WebhookInbox {
  /** The URL registered as the merchant's webhook endpoint. */
  readonly url: string;
  /** Every verified event so far, in the order it arrived (a redelivery appears again). */
  readonly received: readonly WebhookEvent[];
  /**
   * The first event of `type` (and matching `predicate`, given the event's `data.object`)
   * received so far or from now on; rejects after `timeout` ms, naming what did arrive.
   */
  waitFor<T = Record<string, unknown>>(type: string, predicate?: (object: T, event: WebhookEvent<T>) => boolean, options?: WaitForOptions): Promise<WebhookEvent<T>>;
  /** Forgets what was received. */
  clear(): void;
}

interface Waiter {
  matches(event: WebhookEvent): boolean;
  resolve(event: WebhookEvent): void;
}

/** A delivery whose signature does not verify with the inbox's secret is refused 401 and kept out. */
function verifies(secret: string, headers: Record<string, string | string[] | undefined>, body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
  return signatures.split(' ').some((s) => safeEqual(s, expected));
}

class Inbox implements WebhookInbox {
  secret: string | null = null;
  readonly received: WebhookEvent[] = [];
  private waiters = new Set<Waiter>();

  constructor(readonly url: string) {}

  /** Deliveries are accepted once the endpoint's secret is known (it is shown when registered). */
  verifyWith(secret: string): void {
    this.secret = secret;
  }

  accept(event: WebhookEvent): void {
    this.received.push(event);
    for (const w of this.waiters) {
      if (!w.matches(event)) continue;
      this.waiters.delete(w);
      w.resolve(event);
    }
  }

  waitFor<T = Record<string, unknown>>(type: string, predicate?: (object: T, event: WebhookEvent<T>) => boolean, options: WaitForOptions = {}): Promise<WebhookEvent<T>> {
    const matches = (e: WebhookEvent) => e.type === type && (!predicate || predicate(e.data.object as T, e as WebhookEvent<T>));
    const already = this.received.find(matches);
    if (already) return Promise.resolve(already as WebhookEvent<T>);
    const timeout = options.timeout ?? 5000;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const seen = this.received.map((e) => e.type).join(', ') || 'none';
        reject(new Error(`no ${type} webhook${predicate ? ' matching the predicate' : ''} within ${timeout} ms (received: ${seen})`));
      }, timeout);
      const waiter: Waiter = {
        matches,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e as WebhookEvent<T>);
        },
      };
      this.waiters.add(waiter);
    });
  }

  clear(): void {
    this.received.length = 0;
  }
}

export class WebhookReceiver {
  private readonly inboxes = new Map<string, Inbox>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const inbox = receiver?.inboxes.get(req.url ?? '');
        const body = Buffer.concat(chunks).toString('utf8');
        if (!inbox || req.method !== 'POST') return void res.writeHead(404).end();
        if (!inbox.secret || !verifies(inbox.secret, req.headers, body)) return void res.writeHead(401).end();
        let event: WebhookEvent;
        try {
          event = JSON.parse(body) as WebhookEvent;
        } catch {
          return void res.writeHead(400).end();
        }
        res.writeHead(204).end();
        inbox.accept(event);
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  /** A new inbox at its own path; it accepts deliveries once `verifyWith` gives it the endpoint's secret. */
  inbox(name: string): WebhookInbox & { verifyWith(secret: string): void } {
    const path = `/${encodeURIComponent(name)}`;
    const inbox = new Inbox(`${this.baseUrl}${path}`);
    this.inboxes.set(path, inbox);
    return inbox;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((done) => this.server.close(() => done()));
    this.server.closeAllConnections();
    await closed;
  }
}
