import { BlockList, isIP } from 'node:net';

// A key's IP allowlist: IPv4 and IPv6 addresses and CIDR blocks. An empty list accepts any address.

export const MAX_ALLOWLIST_ENTRIES = 50;

/** Why an entry is not an address or a CIDR block, or null when it is one. */
export function allowlistEntryProblem(entry: string): string | null {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (!family || rest.length) return 'must be an IPv4 or IPv6 address, or a CIDR block such as 203.0.113.0/24';
  if (prefix === undefined) return null;
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return `the prefix length after / must be 0 to ${max}`;
  return null;
}

/** 1.2.3.4 for ::ffff:1.2.3.4: a dual-stack socket reports IPv4 clients in the mapped form. */
export function unmapIpv4(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

/** Does the address fall in the allowlist? Always true for an empty list. */
export function ipAllowed(entries: readonly string[], ip: string | undefined): boolean {
  if (entries.length === 0) return true;
  if (!ip) return false;
  const address = unmapIpv4(ip);
  const family = isIP(address);
  if (!family) return false;
  const list = new BlockList();
  for (const entry of entries) {
    const [base, prefix] = entry.split('/') as [string, string | undefined];
    // An IPv4 entry written in its mapped IPv6 form (::ffff:10.0.0.0/104) names IPv4 clients.
    const plain = unmapIpv4(base);
    const mapped = plain !== base;
    const type = isIP(plain) === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(plain, type);
    else list.addSubnet(plain, mapped ? Math.max(0, Number(prefix) - 96) : Number(prefix), type);
  }
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
