import type { Railyard } from '../../src/app.ts';
import type { RunningMock } from '../../src/cli/mock-command.ts';
import { ApiClient } from '../../src/kernel/api-client.ts';

// A merchant driving railyard over HTTP, for the recording tests: the same calls run against the
// recording railyard (beside a standalone mock) and against the replay sandbox, each on virtual
// clocks that waiting moves.

export interface Merchant {
  post(path: string, body: unknown, signed?: boolean): Promise<{ status: number; body: any }>;
  get(path: string): Promise<{ status: number; body: any }>;
  /** Lets business time pass: a second of the virtual clocks. */
  wait(): Promise<void>;
}

export interface SettledObject {
  status: string;
  provider: string | null;
  failure_reason: string | null;
}

let idempotency = 0;

export function merchant(baseUrl: string, key: string, secret: string, wait: () => Promise<void>): Merchant {
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

/**
 * A wait for a recording: a second passes on the upstream mock's virtual clock, then on the
 * recording railyard's; calls made at once take their turns, as time passes one step at a time.
 */
export function secondOnBothClocks(upstream: RunningMock, railyard: Railyard): () => Promise<void> {
  let last = Promise.resolve();
  return () =>
    (last = last.then(async () => {
      await upstream.advance(1);
      await railyard.scheduler.advanceBy(1_000);
    }));
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
