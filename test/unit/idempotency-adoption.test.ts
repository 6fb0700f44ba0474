// Several processes on one database may meet the same orphaned Idempotency-Key at once (a start,
// the sweep, a retry, a status poll). Exactly one of them recovers it: the one that takes the key
// over from the dead boot. The others leave it be; a failed recovery hands the key back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IdempotencyService, type IdempotencyClaim } from '../../src/idempotency/idempotency-service.ts';
import { VirtualClock } from '../../src/kernel/clock.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';

let dir: string;
let store: SqliteStore;
const clock = new VirtualClock(Date.UTC(2026, 0, 1));
const claim: IdempotencyClaim = { scope: { environment: 'test', merchantId: 'mch_a' }, key: 'retry-me', requestHash: 'h' };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'railyard-adopt-'));
  store = new SqliteStore(join(dir, 'railyard.db'));
  // Boot 1 claimed the key for chg_1 and died before answering.
  const dead = new IdempotencyService({ clock, boot: 1, store });
  await store.transaction((tx) => dead.claim(tx, claim, 'chg_1'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A live instance of the fleet (boots 2, 3 and 4 are alive; 1 is not). */
function instance(boot: number, recovery: (id: string) => Promise<void>) {
  const service = new IdempotencyService({ clock, boot, store, liveBoots: async () => [2, 3, 4] });
  service.registerRecovery('chg', recovery);
  return service;
}

const ownerOf = async () => (await store.get<{ boot: number }>("SELECT boot FROM idempotency_keys WHERE resource_id = 'chg_1'"))!.boot;

describe('recovering an orphaned key in a fleet', () => {
  it('runs the recovery once when three instances meet the orphan at once', async () => {
    const ran: number[] = [];
    const services = [2, 3, 4].map((boot) =>
      instance(boot, async (id) => {
        ran.push(boot);
        await new Promise((r) => setTimeout(r, 20));
        await store.transaction((tx) => services[boot - 2]!.completeForResource(tx, id, { status: 201, body: { id } }));
      }),
    );
    await Promise.all(services.map((s) => s.recover('chg_1')));
    expect(ran).toHaveLength(1);
    expect(await services[0]!.lookup(store, claim)).toEqual({ status: 201, body: { id: 'chg_1' } });
  });

  it('leaves a key another live instance adopted to that instance: a retry meets idempotency_conflict, not a second run', async () => {
    let release!: () => void;
    const ran: number[] = [];
    const a = instance(2, async () => {
      ran.push(2);
      await new Promise<void>((r) => (release = r));
    });
    const b = instance(3, async () => {
      ran.push(3);
    });
    const adopting = a.recover('chg_1');
    await new Promise((r) => setTimeout(r, 10));
    expect(await ownerOf()).toBe(2);
    await expect(b.lookup(store, claim)).rejects.toMatchObject({ code: 'idempotency_conflict' });
    release();
    await adopting;
    expect(ran).toEqual([2]);
  });

  it('hands the key back when its recovery fails, so the next one tries again', async () => {
    const a = instance(2, async () => {
      throw new Error('provider unreachable');
    });
    await expect(a.recover('chg_1')).rejects.toThrow('provider unreachable');
    expect(await ownerOf()).toBe(1);
    const ran: number[] = [];
    const b = instance(3, async () => {
      ran.push(3);
    });
    await b.recover('chg_1');
    expect(ran).toEqual([3]);
  });
});
