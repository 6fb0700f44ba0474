import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/kernel/clock.ts';
import { IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { fromMajor, toMajorString } from '../../src/kernel/money.ts';
import { inferNetwork, normaliseMsisdn } from '../../src/kernel/msisdn.ts';
import { safeEqual } from '../../src/kernel/secrets.ts';

describe('MSISDN', () => {
  it.each([
    ['0551234987', '233551234987'],
    ['233551234987', '233551234987'],
    ['+233551234987', '233551234987'],
    ['055-123-4987', '233551234987'],
    ['0201234567', '233201234567'],
  ])('normalises %s to %s', (input, expected) => {
    expect(normaliseMsisdn(input)).toBe(expected);
  });

  it.each(['055123498', '05512349877', '0111234567', '+2340551234987', 'abcdefghij', '', '46733123450'])('rejects %j', (input) => {
    expect(normaliseMsisdn(input)).toBeNull();
  });

  it('infers networks from prefixes and leaves unknown ones to the caller', () => {
    expect(inferNetwork('233241234567')).toBe('MTN');
    expect(inferNetwork('233531234567')).toBe('MTN');
    expect(inferNetwork('233501234567')).toBe('TELECEL');
    expect(inferNetwork('233561234567')).toBe('AT');
    expect(inferNetwork('233231234567')).toBeNull();
  });
});

describe('money', () => {
  it('converts minor units to and from major-unit strings exactly', () => {
    expect(toMajorString(11050, 'GHS')).toBe('110.50');
    expect(toMajorString(5, 'GHS')).toBe('0.05');
    expect(toMajorString(1, 'USDT')).toBe('0.000001');
    expect(fromMajor('110.5', 'GHS')).toBe(11050);
    expect(fromMajor(0.85, 'GHS')).toBe(85);
    expect(() => fromMajor('1.005', 'GHS')).toThrow(RangeError);
  });
});

describe('ids', () => {
  it('are prefixed, time-ordered and identical for the same seed and clock', () => {
    const make = () => {
      const ids = new IdGenerator(new VirtualClock(1_700_000_000_000), new SeededRandom(42));
      return [ids.next('chg'), ids.next('chg'), ids.uuid()];
    };
    const a = make();
    expect(a).toEqual(make());
    expect(a[0]).toMatch(/^chg_[0-9a-z]{20}$/);
    expect(a[0]! < a[1]!).toBe(true);
    expect(a[2]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('stay in creation order and distinct through a burst of thousands while a virtual clock stands still', () => {
    const ids = new IdGenerator(new VirtualClock(1_700_000_000_000), new SeededRandom(7));
    const drawn = Array.from({ length: 5_000 }, () => ids.next('qt'));
    expect(new Set(drawn).size).toBe(drawn.length);
    expect([...drawn].sort()).toEqual(drawn);
  });

  it("of jobs at one instant sort in the jobs' order, whichever job drew first", () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const ids = new IdGenerator(clock, new SeededRandom(3));
    // A round of five jobs (seq 40..44) that run side by side: the last finishes its work first.
    const jobs = [40, 41, 42, 43, 44].map((seq) => ({ seq, ids: ids.fork(`job_${seq}@${clock.now()}`, seq)! }));
    const drawn = new Map<number, string[]>();
    for (const job of [...jobs].reverse()) drawn.set(job.seq, [job.ids.next('jrn'), job.ids.next('jrn'), job.ids.next('jrn')]);
    const inRoundOrder = jobs.flatMap((job) => drawn.get(job.seq)!);
    expect([...inRoundOrder].sort()).toEqual(inRoundOrder);
    expect(inRoundOrder[0]).toMatch(/^jrn_[0-9a-z]{20}$/);
    // 10 time chars, then the job's order (seq 40 = "00018" in base32), then the counter.
    expect(inRoundOrder[0]!.slice(14, 21)).toBe('0001800');
    // The same job forked again (a serial run, a re-run) draws the same ids.
    expect(ids.fork('job_42@1700000000000', 42)!.next('jrn')).toBe(drawn.get(42)![0]);
  });
});

describe('safeEqual', () => {
  it('compares secrets of any length without throwing', () => {
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
