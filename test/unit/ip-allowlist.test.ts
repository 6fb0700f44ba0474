import { describe, expect, it } from 'vitest';
import { allowlistEntryProblem, ipAllowed, unmapIpv4 } from '../../src/auth/ip-allowlist.ts';

describe('ipAllowed', () => {
  it('accepts any address when the list is empty', () => {
    expect(ipAllowed([], '198.51.100.1')).toBe(true);
    expect(ipAllowed([], undefined)).toBe(true);
  });

  it.each([
    [['127.0.0.1'], '127.0.0.1', true],
    [['127.0.0.1'], '::ffff:127.0.0.1', true],
    [['::ffff:127.0.0.1'], '127.0.0.1', true],
    [['10.0.0.0/8'], '10.20.30.40', true],
    [['10.0.0.0/8'], '11.0.0.1', false],
    [['203.0.113.7'], '203.0.113.8', false],
    [['2001:db8::/32'], '2001:db8:1::5', true],
    [['2001:db8::/32'], '2001:db9::5', false],
    [['::1'], '::1', true],
    [['::1'], '127.0.0.1', false],
    [['0.0.0.0/0'], '192.0.2.1', true],
  ] as const)('%j allows %s: %s', (entries, ip, allowed) => {
    expect(ipAllowed(entries, ip)).toBe(allowed);
  });

  it('refuses a missing or unreadable address when the list is not empty', () => {
    expect(ipAllowed(['127.0.0.1'], undefined)).toBe(false);
    expect(ipAllowed(['127.0.0.1'], 'localhost')).toBe(false);
  });
});

describe('allowlistEntryProblem', () => {
  it.each(['127.0.0.1', '10.0.0.0/8', '0.0.0.0/0', '::1', '2001:db8::/32', '::/0'])('accepts %s', (entry) => {
    expect(allowlistEntryProblem(entry)).toBeNull();
  });

  it.each(['localhost', '127.0.0.1:80', '10.0.0.0/33', '10.0.0.0/', '10.0.0.0/8/8', '::1/129', '256.0.0.1', '', '10.0.0.0/-1'])('refuses %j', (entry) => {
    expect(allowlistEntryProblem(entry)).toMatch(/./);
  });
});

it('unmapIpv4 turns an IPv4-mapped IPv6 address back into IPv4 and leaves others alone', () => {
  expect(unmapIpv4('::ffff:192.0.2.1')).toBe('192.0.2.1');
  expect(unmapIpv4('2001:db8::1')).toBe('2001:db8::1');
});

it('reads an IPv4 block written in its mapped IPv6 form as the IPv4 block', () => {
  expect(ipAllowed(['::ffff:10.0.0.0/104'], '10.9.8.7')).toBe(true);
  expect(ipAllowed(['::ffff:10.0.0.0/104'], '11.0.0.1')).toBe(false);
});
