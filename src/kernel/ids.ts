import { hash, randomBytes } from 'node:crypto';
import type { Clock } from './clock.ts';
import { currentJob } from './job-scope.ts';

// Crockford base32: sortable, unambiguous.
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export interface RandomSource {
  /** An unsigned 32-bit integer. */
  nextUint32(): number;
  /**
   * A stream of its own for the work named `name`, which draws the same values whatever else is
   * drawn meanwhile; undefined when this source is not reproducible anyway (crypto randomness).
   */
  fork?(name: string): RandomSource;
}

/**
 * A reproducible stream named by a seed and a name: SHA-256 of both and a block counter, eight
 * draws a block. Unlike a 32-bit seed, two names practically never give overlapping streams, so
 * the ids of thousands of jobs forked at one instant do not collide.
 */
export class NamedRandom implements RandomSource {
  private block = 0;
  private buffer = Buffer.alloc(0);
  private offset = 0;
  constructor(private readonly name: string) {}
  nextUint32(): number {
    if (this.offset + 4 > this.buffer.length) {
      // One-shot: half the cost of a Hash object, and a job draws its first id from a fresh block.
      this.buffer = hash('sha256', `${this.name}#${this.block++}`, 'buffer');
      this.offset = 0;
    }
    const value = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }
  fork(name: string): RandomSource {
    return new NamedRandom(`${this.name}/${name}`);
  }
}

/** mulberry32: small, fast and good enough for deterministic ids and simulations. */
export class SeededRandom implements RandomSource {
  private state: number;
  private readonly seed: number;
  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.state = this.seed;
  }
  /** Named after the seed, not the state: the same whatever was drawn before. */
  fork(name: string): RandomSource {
    return new NamedRandom(`${this.seed}/${name}`);
  }
  nextUint32(): number {
    this.state = (this.state + MULBERRY_STEP) >>> 0;
    return mulberry(this.state);
  }
  /**
   * The `index`-th number (from 0) a SeededRandom(seed) draws, without drawing the ones before it:
   * the state after n draws is seed + n·step (mod 2^32), so any draw is a pure function of its place.
   */
  static uint32At(seed: number, index: number): number {
    return mulberry(((seed >>> 0) + Math.imul(index + 1, MULBERRY_STEP)) >>> 0);
  }
}

const MULBERRY_STEP = 0x6d2b79f5;

/** mulberry32's output function of a state. */
function mulberry(state: number): number {
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

export class CryptoRandom implements RandomSource {
  // One call to the system's generator fills many draws: each id takes eight.
  private pool = Buffer.alloc(0);
  private offset = 0;
  nextUint32(): number {
    if (this.offset + 4 > this.pool.length) {
      this.pool = randomBytes(4096);
      this.offset = 0;
    }
    const value = this.pool.readUInt32BE(this.offset);
    this.offset += 4;
    return value;
  }
}

/**
 * A UUID (v4 layout) derived from a name: the same name always gives the same UUID. Adapters
 * send it where an upstream wants a UUID reference (MTN's X-Reference-Id), so that a call
 * resumed after a restart carries the reference of the first and the upstream deduplicates it.
 */
export function uuidFrom(name: string): string {
  const bytes = hash('sha256', name, 'buffer').subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function seedFromString(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * The seed of one process's random sequence: the configured seed on a fresh database (replays
 * stay byte-identical), mixed with the boot count on every later start, so that a sandbox
 * restarted on the same database at the same virtual time never draws the same ids again.
 */
export function bootSeed(seed: number, boot: number): number {
  return boot <= 1 ? seed >>> 0 : seedFromString(`${seed >>> 0}:boot:${boot}`);
}

/** A forked generator's order takes 5 chars: it wraps after 32^5 (33,554,432) jobs. */
const ORDER_SPAN = 32 ** 5;

/**
 * Prefixed, time-ordered ids: `chg_` + 10 chars of clock time + 2 chars of a counter (creation
 * order within a millisecond) + 8 random chars. With a virtual clock and a seeded random source
 * the sequence is the same on every run.
 *
 * A job's fork (`fork(name, order)`) keeps the time and counter but spends 5 of the random chars
 * on the job's order (its `seq`): 10 time + 5 order + 2 counter + 3 random. The jobs of one
 * virtual instant then draw ids in round order, so their journals, events, deliveries and jobs
 * are appended to each unique index instead of landing at random places in it.
 */
export class IdGenerator {
  private lastTime = -1;
  private counter = 0;
  constructor(
    private readonly clock: Clock,
    private readonly random: RandomSource,
    /** The generator this one was forked from: inside a job's scope, that one draws from this. */
    private readonly parent?: IdGenerator,
    /** A fork's place among the forks (a job's seq): its ids sort by it within a millisecond. */
    private readonly order?: number,
  ) {}

  /**
   * The ids of the work named `name` (a job): a stream of their own, so they are the same
   * whichever jobs ran before or beside it. With an `order` (the job's seq, the same in a serial
   * and a concurrent run), the fork's ids carry it, so ids of work at one instant sort in that
   * order and distinct orders never collide. Undefined when this generator is not reproducible
   * (crypto randomness): its ids are unique as they are.
   */
  fork(name: string, order?: number): IdGenerator | undefined {
    const random = this.random.fork?.(name);
    return random ? new IdGenerator(this.clock, random, this, order) : undefined;
  }

  /** The generator to draw from now: the current job's fork of this one, or this one. */
  private source(): IdGenerator {
    const scoped = currentJob()?.ids;
    return scoped instanceof IdGenerator && scoped.parent === this ? scoped : this;
  }

  next(prefix: string): string {
    const source = this.source();
    if (source !== this) return source.next(prefix);
    const now = this.clock.now();
    // A counter keeps ids from the same millisecond in creation order. Past its 1,024 values (a
    // burst on a virtual clock that stands still) the time part moves on a millisecond, so ids stay
    // in creation order: they are appended to their indexes instead of landing all over them.
    if (now > this.lastTime) {
      this.lastTime = now;
      this.counter = 0;
    } else if (++this.counter > 1023) {
      this.lastTime++;
      this.counter = 0;
    }
    let time = '';
    let t = this.lastTime;
    for (let i = 0; i < 10; i++) {
      time = ALPHABET[t % 32] + time;
      t = Math.floor(t / 32);
    }
    let order = '';
    if (this.order !== undefined) {
      let o = ((this.order % ORDER_SPAN) + ORDER_SPAN) % ORDER_SPAN;
      for (let i = 0; i < 5; i++) {
        order = ALPHABET[o % 32] + order;
        o = Math.floor(o / 32);
      }
    }
    let rand = ALPHABET[(this.counter >> 5) & 31]! + ALPHABET[this.counter & 31]!;
    for (let i = order.length; i < 8; i++) rand += ALPHABET[this.random.nextUint32() & 31];
    return `${prefix}_${time}${order}${rand}`;
  }

  /** A raw draw from the same source, for simulated data (addresses, transaction ids). */
  nextUint32(): number {
    return this.source().random.nextUint32();
  }

  /** A UUID v4 (MTN's X-Reference-Id must be one), drawn from the same source. */
  uuid(): string {
    const bytes = Buffer.alloc(16);
    const random = this.source().random;
    for (let i = 0; i < 16; i += 4) bytes.writeUInt32BE(random.nextUint32(), i);
    bytes[6] = (bytes[6]! & 0x0f) | 0x40;
    bytes[8] = (bytes[8]! & 0x3f) | 0x80;
    const hex = bytes.toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
}
