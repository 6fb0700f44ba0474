import { bearer, requestJson, type JsonResponse } from './http-json.ts';
import { SANDBOX_KEY } from './launch.ts';

// The few railyard calls the measures make besides the measured ones, with the sandbox key.

export const auth = bearer(SANDBOX_KEY);

export async function expectOk(res: Promise<JsonResponse>, what: string): Promise<JsonResponse> {
  const r = await res;
  if (r.status < 200 || r.status >= 300) throw new Error(`${what} answered ${r.status}: ${r.text.slice(0, 400)}`);
  return r;
}

/** Credits the sandbox wallet (test key only). */
export function fundWallet(baseUrl: string, amount: number): Promise<JsonResponse> {
  return expectOk(requestJson(baseUrl, 'POST', '/api/v1/sandbox/wallet/fund', { headers: auth, body: { amount } }), 'wallet fund');
}

export interface ClockState {
  mode: string;
  now: string;
  pending_jobs: number;
  next_job_at: string | null;
  jobs_run?: number;
}

export async function clockState(baseUrl: string): Promise<ClockState> {
  const r = await expectOk(requestJson(baseUrl, 'GET', '/api/v1/sandbox/clock', { headers: auth, timeoutMs: 60_000 }), 'GET clock');
  return r.json.data as ClockState;
}

/**
 * POST /sandbox/clock/advance, waiting for the 200 however many jobs fall due (a large backlog
 * would otherwise answer 202 at once); the raw answer (callers time it and read jobs_run).
 */
export function advanceClock(baseUrl: string, seconds: number, timeoutMs: number): Promise<JsonResponse> {
  return requestJson(baseUrl, 'POST', '/api/v1/sandbox/clock/advance', { headers: auth, body: { seconds, wait: true }, timeoutMs });
}

/**
 * Waits until nothing is due at the current virtual time (webhook deliveries of the creation
 * phase, which the 200 ms scheduler tick sends), so a timed advance starts from a quiet sandbox.
 */
export async function waitUntilNothingDue(baseUrl: string, maxSeconds: number): Promise<{ seconds: number; quiet: boolean; state: ClockState }> {
  const started = Date.now();
  let quietChecks = 0;
  let state = await clockState(baseUrl);
  while (Date.now() - started < maxSeconds * 1_000) {
    state = await clockState(baseUrl);
    const due = state.next_job_at !== null && Date.parse(state.next_job_at) <= Date.parse(state.now);
    quietChecks = due ? 0 : quietChecks + 1;
    // Twice in a row: the outbox fan-out of one tick can add deliveries due now.
    if (quietChecks >= 2) return { seconds: (Date.now() - started) / 1_000, quiet: true, state };
    await new Promise((done) => setTimeout(done, 250));
  }
  return { seconds: (Date.now() - started) / 1_000, quiet: false, state };
}
