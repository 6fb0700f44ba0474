// The dashboard's small pieces that carry its security: the escaping template, the browser-address
// check of a key's IP allowlist, and sessions.
import { describe, expect, it } from 'vitest';
import { addressAllowed } from '../../src/dashboard/dashboard.ts';
import { csrfMatches, DashboardSessions } from '../../src/dashboard/dashboard-sessions.ts';
import { href, html, trusted } from '../../src/dashboard/html.ts';
import { VirtualClock } from '../../src/kernel/clock.ts';

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

describe('dashboard sessions', () => {
  it('expire after the idle time, and are touched by each use', () => {
    const clock = new VirtualClock(0);
    const sessions = new DashboardSessions({ clock, idleMs: 1000, max: 10 });
    const s = sessions.create();
    clock.set(900);
    expect(sessions.find(s.id)).toBe(s);
    clock.set(1800);
    expect(sessions.find(s.id)).toBe(s);
    clock.set(2801);
    expect(sessions.find(s.id)).toBeNull();
  });

  it('keep at most max, the least recently used going first', () => {
    const clock = new VirtualClock(0);
    const sessions = new DashboardSessions({ clock, idleMs: 60_000, max: 2 });
    const a = sessions.create();
    const b = sessions.create();
    sessions.find(a.id);
    sessions.create();
    expect(sessions.size).toBe(2);
    expect(sessions.find(b.id)).toBeNull();
    expect(sessions.find(a.id)).not.toBeNull();
  });

  it('evict signed-out sessions before signed-in ones, so opening sign-in forms cannot push users out', () => {
    const sessions = new DashboardSessions({ clock: new VirtualClock(0), idleMs: 60_000, max: 2 });
    const user = sessions.create();
    user.keys.test = { key: 'sk_test_x', environment: 'test', keyId: null, role: null, ipAllowlist: [], signingSecret: null, hint: 'sk_test_…' };
    for (let i = 0; i < 5; i++) sessions.create();
    expect(sessions.find(user.id)).toBe(user);
  });

  it('renew gives a new id and CSRF token, and forgets the old id', () => {
    const sessions = new DashboardSessions({ clock: new VirtualClock(0), idleMs: 60_000, max: 10 });
    const s = sessions.create();
    const renewed = sessions.renew(s);
    expect(renewed.id).not.toBe(s.id);
    expect(renewed.csrf).not.toBe(s.csrf);
    expect(sessions.find(s.id)).toBeNull();
    expect(csrfMatches(renewed, renewed.csrf)).toBe(true);
    expect(csrfMatches(renewed, s.csrf)).toBe(false);
    expect(csrfMatches(renewed, undefined)).toBe(false);
  });
});
