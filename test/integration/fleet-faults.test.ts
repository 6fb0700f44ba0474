// Faults on the merchant API across several railyard instances on one PostgreSQL database: a fault
// switched on through one instance is the fleet's, and every count, window and state is counted
// for the fleet, as one sandbox would count it. Each test starts its instances on one fresh
// database of a throwaway cluster, as a fleet behind a load balancer would run them.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../../src/railyard-scenarios.ts';
import { fleetHarness } from '../support/fleet-harness.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

const { postgres, cleanups } = fleetHarness();

/** `n` served sandboxes started together on one fresh database. */
async function fleet(n: number): Promise<TestSandbox[]> {
  const db = await (await postgres()).createDatabase();
  const sandboxes = await Promise.all(Array.from({ length: n }, () => startTestSandbox({ db })));
  for (const sb of sandboxes) cleanups.push(() => sb.close());
  return sandboxes;
}

const switchOn = async (sb: TestSandbox, body: Record<string, unknown>) => {
  const res = await sb.post('/api/v1/sandbox/faults', body);
  expect(res.status).toBe(201);
  return res.body.data as { id: string; name: string };
};
const listed = async (sb: TestSandbox) => (await sb.get('/api/v1/sandbox/faults')).body.data as { id: string | null; name: string; matched: number; fired: number }[];
const wallet = async (sb: TestSandbox) => (await sb.get('/api/v1/wallet')).status;

describe('faults on the merchant API across instances', () => {
  it('switches a fault on through one instance for every instance, and off through another for all', async () => {
    const [a, b] = await fleet(2);
    const fault = await switchOn(a!, { profile: 'server-errors', route: 'GET /api/v1/wallet' });

    // B lists it, under the id A gave it, and answers with it.
    expect((await listed(b!)).map((f) => [f.id, f.name])).toEqual([[fault.id, 'server-errors on GET /api/v1/wallet']]);
    expect(await wallet(b!)).toBe(503);
    expect(await wallet(a!)).toBe(503);
    // Each instance's listing counts the requests the fleet served.
    expect(await listed(a!)).toMatchObject([{ id: fault.id, matched: 2, fired: 2 }]);

    expect((await b!.http.delete(`/api/v1/sandbox/faults/${fault.id}`).set('Authorization', `Bearer ${b!.key}`)).status).toBe(200);
    expect(await listed(a!)).toEqual([]);
    expect(await wallet(a!)).toBe(200);
    expect(await wallet(b!)).toBe(200);
    // Already gone for the fleet: A cannot switch it off again.
    expect((await a!.http.delete(`/api/v1/sandbox/faults/${fault.id}`).set('Authorization', `Bearer ${a!.key}`)).status).toBe(404);
  });

  it('gives faults switched on through different instances different ids, and switches them all off at once', async () => {
    const [a, b] = await fleet(2);
    const first = await switchOn(a!, { profile: 'slow-responses', latency_ms: 1 });
    const second = await switchOn(b!, { profile: 'slow-responses', latency_ms: 1 });
    expect(first.id).not.toBe(second.id);
    expect((await listed(a!)).map((f) => f.id)).toEqual([first.id, second.id]);
    const off = await b!.http.delete('/api/v1/sandbox/faults').set('Authorization', `Bearer ${b!.key}`);
    expect(off.body.data).toEqual({ removed: 2 });
    expect(await listed(a!)).toEqual([]);
  });

  it('lets exactly `requests` through per window across instances, one after another or at once', async () => {
    const [a, b] = await fleet(2);
    await switchOn(a!, { profile: 'rate-limit', route: 'GET /api/v1/wallet', requests: 3, per_seconds: 60 });
    const statuses: number[] = [];
    for (const sb of [a!, b!, a!, b!, a!, b!]) statuses.push(await wallet(sb));
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);

    // The next window: six at once, three on each instance; three pass, whichever they are.
    await a!.advance(60);
    const together = await Promise.all([a!, b!, a!, b!, a!, b!].map((sb) => sb.get('/api/v1/wallet')));
    expect(together.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429, 429]);
    expect(
      together
        .filter((r) => r.status === 200)
        .map((r) => r.headers['ratelimit-remaining'])
        .sort(),
    ).toEqual(['0', '1', '2']);
  });

  it('counts `times` and `every` for the fleet, and a restart through one instance starts them afresh for all', async () => {
    const [a, b] = await fleet(2);
    await switchOn(b!, { profile: 'server-errors', route: 'GET /api/v1/wallet', times: 2 });
    const statuses: number[] = [];
    for (const sb of [a!, b!, a!, b!]) statuses.push(await wallet(sb));
    expect(statuses).toEqual([503, 503, 200, 200]);

    expect((await a!.post('/api/v1/sandbox/scenarios/restart', {})).status).toBe(200);
    expect(await wallet(b!)).toBe(503);
    expect(await listed(a!)).toMatchObject([{ matched: 1, fired: 1 }]);

    await b!.http.delete('/api/v1/sandbox/faults').set('Authorization', `Bearer ${b!.key}`);
    await switchOn(a!, { profile: 'server-errors', route: 'GET /api/v1/wallet', every: 3 });
    const everyThird: number[] = [];
    for (const sb of [a!, b!, a!, b!, a!, b!]) everyThird.push(await wallet(sb));
    expect(everyThird).toEqual([200, 200, 503, 200, 200, 503]);
  });

  it("draws `probability` by the fleet's count of matched requests: two instances give what one would", async () => {
    const probable = { profile: 'server-errors', route: 'GET /api/v1/wallet', probability: 0.5 };
    const [one] = await fleet(1);
    await switchOn(one!, probable);
    const alone: number[] = [];
    for (let i = 0; i < 16; i++) alone.push(await wallet(one!));
    expect(alone).toContain(503);
    expect(alone).toContain(200);

    const [a, b] = await fleet(2);
    await switchOn(a!, probable);
    const together: number[] = [];
    for (let i = 0; i < 16; i++) together.push(await wallet(i % 2 ? b! : a!));
    expect(together).toEqual(alone);
  });

  it("moves a file's named states for the fleet", async () => {
    const [a, b] = await fleet(2);
    const scenario = parseScenario(
      `version: 1
name: flaky
api:
  - { name: first call fails, match: { route: /api/v1/wallet }, state: { scenario: flaky, requires: Started, sets: failed-once }, respond: { status: 503, before_commit: true } }
  - { name: second call fails too, match: { route: /api/v1/wallet }, state: { scenario: flaky, requires: failed-once, sets: healthy }, respond: { status: 500, before_commit: true } }
`,
      'flaky.yaml',
    );
    // Every instance loads the same files, as a fleet's instances do.
    await a!.ry.apiFaults.replace(scenario.api);
    await b!.ry.apiFaults.replace(scenario.api);
    const statuses: number[] = [];
    for (const sb of [a!, b!, a!]) statuses.push(await wallet(sb));
    expect(statuses).toEqual([503, 500, 200]);
  });
});
