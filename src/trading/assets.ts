import type { Asset } from './price-feed.ts';

// Which chains each stablecoin trades on, and what an address looks like on each.
export const NETWORKS_BY_ASSET: Record<Asset, readonly string[]> = {
  USDT: ['TRC20', 'ERC20'],
  USDC: ['ERC20', 'SOL'],
};

export const ALL_TRADING_NETWORKS = ['TRC20', 'ERC20', 'SOL'] as const;

const ADDRESS_FORMAT: Record<string, { pattern: RegExp; example: string }> = {
  TRC20: { pattern: /^T[1-9A-HJ-NP-Za-km-z]{33}$/, example: 'T followed by 33 base58 characters' },
  ERC20: { pattern: /^0x[0-9a-fA-F]{40}$/, example: '0x followed by 40 hex digits' },
  SOL: { pattern: /^[1-9A-HJ-NP-Za-km-z]{32,44}$/, example: '32 to 44 base58 characters' },
};

export function addressProblem(network: string, address: string): string | null {
  const format = ADDRESS_FORMAT[network];
  if (!format) return `unknown network ${network}`;
  return format.pattern.test(address) ? null : `not a ${network} address (${format.example})`;
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A well-formed address for `network`, drawn from `next` (deterministic under a seeded source). */
export function makeAddress(network: string, next: () => number): string {
  const pick = (alphabet: string, n: number) => Array.from({ length: n }, () => alphabet[next() % alphabet.length]).join('');
  if (network === 'TRC20') return `T${pick(BASE58, 33)}`;
  if (network === 'ERC20') return `0x${pick('0123456789abcdef', 40)}`;
  return pick(BASE58, 44);
}

/** A simulated on-chain transaction id in the network's usual form. */
export function makeTransactionId(network: string, next: () => number): string {
  const hex = Array.from({ length: 64 }, () => '0123456789abcdef'[next() % 16]).join('');
  if (network === 'ERC20') return `0x${hex}`;
  if (network === 'SOL') return Array.from({ length: 88 }, () => BASE58[next() % 58]).join('');
  return hex;
}
