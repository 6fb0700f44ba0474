import { ApiClient } from '../../src/kernel/api-client.ts';

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
  const api = new ApiClient({ baseUrl, key, signingSecret: secret });
  return {
    wait,
    async post(path, body, signed = false) {
      const res = await api.request({ method: 'POST', path, body, idempotencyKey: `recording-merchant-${++idempotency}`, sign: signed });
      return { status: res.status, body: res.json };
    },
    async get(path) {
      const res = await api.request({ method: 'GET', path });
      return { status: res.status, body: res.json };
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
