import { signRequest } from '../../src/kernel/sign-request.ts';

// A merchant driving railyard over HTTP, for the recording tests: the same calls run against the
// recording railyard (real time) and against the replay sandbox (its virtual clock).

export interface Merchant {
  post(path: string, body: unknown, signed?: boolean): Promise<{ status: number; body: any }>;
  get(path: string): Promise<{ status: number; body: any }>;
  /** Lets time pass: real time while recording, the virtual clock in a replay. */
  wait(): Promise<void>;
}

export interface SettledObject {
  status: string;
  provider: string | null;
  failure_reason: string | null;
}

const realTime = () => new Promise<void>((r) => setTimeout(r, 250));

let idempotency = 0;

export function merchant(baseUrl: string, key: string, secret: string, wait: () => Promise<void> = realTime): Merchant {
  return {
    wait,
    async post(path, body, signed = false) {
      const raw = JSON.stringify(body);
      const idempotencyKey = `recording-merchant-${++idempotency}`;
      const headers: Record<string, string> = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Idempotency-Key': idempotencyKey };
      if (signed) {
        const ts = String(Math.floor(Date.now() / 1000));
        headers['X-Service-Timestamp'] = ts;
        headers['X-Service-Signature'] = signRequest(secret, ts, { method: 'POST', pathAndQuery: path, idempotencyKey, rawBody: raw });
      }
      const res = await fetch(`${baseUrl}${path}`, { method: 'POST', headers, body: raw });
      return { status: res.status, body: await res.json() };
    },
    async get(path) {
      const res = await fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });
      return { status: res.status, body: await res.json() };
    },
  };
}

/** Polls until the charge or transfer at `path` leaves its pending state (or `withinMs` of real time pass). */
export async function settled(client: Merchant, path: string, withinMs = 25_000): Promise<SettledObject> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const { data } = (await client.get(path)).body;
    if (!String(data.status).startsWith('pending') || performance.now() > deadline) return { status: data.status, provider: data.provider, failure_reason: data.failure_reason };
    await client.wait();
  }
}
