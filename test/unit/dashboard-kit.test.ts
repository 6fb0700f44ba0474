// The dashboard's small pieces that carry its security: the escaping template, the browser-address
// check of a key's IP allowlist, and sessions.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { addressAllowed } from '../../src/dashboard/dashboard.ts';
import { csrfMatches, DashboardSessions, type SessionVault } from '../../src/dashboard/dashboard-sessions.ts';
import { href, html, trusted } from '../../src/dashboard/html.ts';
import { VirtualClock } from '../../src/kernel/clock.ts';
import { DashboardSessionRepository } from '../../src/store/repositories/dashboard-session-repository.ts';
import { SqliteStore } from '../../src/store/sqlite-store.ts';

describe('the html template', () => {
  it('escapes every interpolated value', () => {
    const name = `<script>alert("x")</script>' & more`;
    expect(html`<p title="${name}">${name}</p>`.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; more">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39; &amp; more</p>',
    );
  });

  it('nests templates without escaping them twice, and joins lists', () => {
    const items = ['a<b', 'c'].map((t) => html`<li>${t}</li>`);
    expect(html`<ul>${items}</ul>`.text).toBe('<ul><li>a&lt;b</li><li>c</li></ul>');
    expect(html`${trusted('<br>')}${null}${undefined}${false}${0}`.text).toBe('<br>0');
  });

  it('encodes query parameters and leaves out empty ones', () => {
    expect(href('/dashboard/objects', { kind: 'a&b', status: '', cursor: undefined })).toBe('/dashboard/objects?kind=a%26b');
  });
});

describe("a key's IP allowlist, applied to the browser's address", () => {
  it('allows any address when empty', () => {
    expect(addressAllowed('203.0.113.9', [])).toBe(true);
  });

  it('matches addresses and CIDR blocks, IPv4 (also IPv4-mapped) and IPv6', () => {
    const list = ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32'];
    expect(addressAllowed('203.0.113.7', list)).toBe(true);
    expect(addressAllowed('::ffff:10.1.2.3', list)).toBe(true);
    expect(addressAllowed('2001:db8::1', list)).toBe(true);
    expect(addressAllowed('203.0.113.8', list)).toBe(false);
    expect(addressAllowed('2001:db9::1', list)).toBe(false);
    expect(addressAllowed(undefined, list)).toBe(false);
  });
});

/** The sessions of a dashboard, kept where railyard keeps them: its store (SQLite here). */
function sessionsOn(store: SqliteStore, clock: VirtualClock, opts: { idleMs: number; max: number }) {
  const repo = new DashboardSessionRepository();
  const vault: SessionVault = {
    find: (h) => repo.find(store, h),
    put: (s) => repo.put(store, s),
    touch: (h, seen, expires) => repo.touch(store, h, seen, expires),
    remove: (h) => repo.remove(store, h),
    prune: (now, max) => repo.prune(store, now, max),
  };
  return new DashboardSessions({ clock, ...opts, vault });
}

const stores: SqliteStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
function freshStore(): SqliteStore {
  const store = new SqliteStore(':memory:');
  stores.push(store);
  return store;
}

const testKey = { key: 'sk_test_x', environment: 'test' as const, keyId: null, role: null, ipAllowlist: [], signingSecret: null, hint: 'sk_test_…' };

describe('dashboard sessions', () => {
  it('expire after the idle time, and are touched by each use', async () => {
    const clock = new VirtualClock(0);
    const sessions = sessionsOn(freshStore(), clock, { idleMs: 1000, max: 10 });
    const s = await sessions.create();
    clock.set(900);
    expect((await sessions.find(s.id))?.csrf).toBe(s.csrf);
    clock.set(1800);
    expect((await sessions.find(s.id))?.csrf).toBe(s.csrf);
    clock.set(2801);
    expect(await sessions.find(s.id)).toBeNull();
  });

  it('keep at most max, the least recently used going first', async () => {
    const clock = new VirtualClock(0);
    const sessions = sessionsOn(freshStore(), clock, { idleMs: 60_000, max: 2 });
    const a = await sessions.create();
    clock.set(1_000);
    const b = await sessions.create();
    clock.set(10_000);
    await sessions.find(a.id);
    clock.set(11_000);
    await sessions.create();
    expect(await sessions.find(b.id)).toBeNull();
    expect(await sessions.find(a.id)).not.toBeNull();
  });

  it('evict signed-out sessions before signed-in ones, so opening sign-in forms cannot push users out', async () => {
    const clock = new VirtualClock(0);
    const sessions = sessionsOn(freshStore(), clock, { idleMs: 60_000, max: 2 });
    const user = await sessions.create();
    user.keys.test = testKey;
    await sessions.save(user);
    for (let i = 0; i < 5; i++) {
      clock.set(clock.now() + 1);
      await sessions.create();
    }
    expect((await sessions.find(user.id))?.keys.test).toEqual(testKey);
  });

  it('renew gives a new id and CSRF token, and forgets the old id', async () => {
    const sessions = sessionsOn(freshStore(), new VirtualClock(0), { idleMs: 60_000, max: 10 });
    const s = await sessions.create();
    const renewed = await sessions.renew(s);
    expect(renewed.id).not.toBe(s.id);
    expect(renewed.csrf).not.toBe(s.csrf);
    expect(await sessions.find(s.id)).toBeNull();
    expect(csrfMatches(renewed, renewed.csrf)).toBe(true);
    expect(csrfMatches(renewed, s.csrf)).toBe(false);
    expect(csrfMatches(renewed, undefined)).toBe(false);
  });

  it('keep only the hash of the token and sealed contents: the row reveals no key, and opens only with the token', async () => {
    const store = freshStore();
    const sessions = sessionsOn(store, new VirtualClock(0), { idleMs: 60_000, max: 10 });
    const s = await sessions.create();
    s.keys.test = { ...testKey, key: 'sk_test_secretvalue123', signingSecret: 'sig_secret_456' };
    await sessions.save(s);
    const rows = await store.all<Record<string, unknown>>('SELECT * FROM dashboard_sessions');
    expect(rows).toHaveLength(1);
    const text = JSON.stringify(rows);
    for (const secret of [s.id, s.csrf, 'sk_test_secretvalue123', 'sig_secret_456']) expect(text).not.toContain(secret);
    expect(rows[0]!.token_hash).toBe(createHash('sha256').update(s.id).digest('hex'));
    // Another token of the right shape finds nothing; a row whose seal does not open is no session.
    expect(await sessions.find(`${s.id.slice(0, -1)}${s.id.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    await store.run('UPDATE dashboard_sessions SET sealed = ?', [Buffer.alloc(60).toString('base64url')]);
    expect(await sessions.find(s.id)).toBeNull();
  });
});
