import { describe, expect, it } from 'vitest';
import { RequestLog } from '../../src/inspector/request-log.ts';
import { VirtualClock } from '../../src/kernel/clock.ts';

const MERCHANT = 'mer_test';

function entry(path: string) {
  return { kind: 'merchant' as const, method: 'GET', path, status: 200, latency_ms: 1, idempotency_key: null, object_id: null, provider: null, match: null };
}

describe('the requests inspector log', () => {
  it('keeps at most max_requests entries per environment, the newest', () => {
    const log = new RequestLog({ clock: new VirtualClock(0), maxPerEnvironment: 3, maxBytesPerEnvironment: 1_048_576 });
    for (let i = 1; i <= 10; i++) log.record('test', MERCHANT, entry(`/api/v1/charges/${i}`));
    expect(log.count('test')).toBe(3);
    expect(log.list('test', MERCHANT, { limit: 10 }).items.map((e) => e.path)).toEqual(['/api/v1/charges/10', '/api/v1/charges/9', '/api/v1/charges/8']);
  });

  it('is bounded in bytes too: long paths push the oldest entries out before the count is reached', () => {
    const maxBytes = 65_536;
    const log = new RequestLog({ clock: new VirtualClock(0), maxPerEnvironment: 1_000, maxBytesPerEnvironment: maxBytes });
    const long = (i: number) => `/api/v1/charges/${i}/${'x'.repeat(8_000)}`;
    for (let i = 1; i <= 100; i++) log.record('test', MERCHANT, entry(long(i)));
    expect(log.count('test')).toBeLessThan(100);
    expect(log.count('test')).toBeGreaterThan(0);
    expect(log.bytes('test')).toBeLessThanOrEqual(maxBytes);
    const kept = log.list('test', MERCHANT, { limit: 1_000 }).items;
    expect(kept[0]!.path).toBe(long(100));
    // Short entries after long ones: the long ones leave, and many more short ones fit the same budget.
    for (let i = 1; i <= 2_000; i++) log.record('test', MERCHANT, entry(`/s/${i}`));
    const after = log.list('test', MERCHANT, { limit: 1_000 }).items;
    expect(after.every((e) => e.path.startsWith('/s/'))).toBe(true);
    expect(after.length).toBeGreaterThan(kept.length);
    expect(log.bytes('test')).toBeLessThanOrEqual(maxBytes);
  });

  it('counts each environment against its own budget', () => {
    const log = new RequestLog({ clock: new VirtualClock(0), maxPerEnvironment: 1_000, maxBytesPerEnvironment: 65_536 });
    for (let i = 1; i <= 50; i++) log.record('test', MERCHANT, entry(`/t/${'x'.repeat(8_000)}`));
    log.record('live', MERCHANT, entry('/l'));
    expect(log.count('live')).toBe(1);
    expect(log.count('test')).toBeLessThan(50);
  });
});
