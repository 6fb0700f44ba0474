import type { Network } from '../kernel/msisdn.ts';

// What POST /v1/bills sells: the billers per category and the fixed-price products (data
// bundles, TV packages). Prices are the sandbox's own, in pesewas; an open-amount biller (airtime,
// ECG, GWCL) takes any amount within its bounds.

export type BillCategory = 'airtime' | 'data' | 'electricity' | 'water' | 'tv';

export interface BillProduct {
  code: string;
  category: BillCategory;
  biller: string;
  name: string;
  /** Pesewas. */
  amount: number;
}

export interface OpenAmountBiller {
  category: BillCategory;
  biller: string;
  name: string;
  /** Pesewas, inclusive. */
  min: number;
  max: number;
}

export const BILL_PRODUCTS: readonly BillProduct[] = [
  { code: 'MTN-DATA-500MB', category: 'data', biller: 'MTN', name: 'MTN 500 MB, 7 days', amount: 500 },
  { code: 'MTN-DATA-1GB', category: 'data', biller: 'MTN', name: 'MTN 1 GB, 30 days', amount: 1_000 },
  { code: 'MTN-DATA-5GB', category: 'data', biller: 'MTN', name: 'MTN 5 GB, 30 days', amount: 4_000 },
  { code: 'TELECEL-DATA-1GB', category: 'data', biller: 'TELECEL', name: 'Telecel 1 GB, 30 days', amount: 1_000 },
  { code: 'TELECEL-DATA-3GB', category: 'data', biller: 'TELECEL', name: 'Telecel 3 GB, 30 days', amount: 2_500 },
  { code: 'AT-DATA-1GB', category: 'data', biller: 'AT', name: 'AT 1 GB, 30 days', amount: 800 },
  { code: 'AT-DATA-4GB', category: 'data', biller: 'AT', name: 'AT 4 GB, 30 days', amount: 2_500 },
  { code: 'DSTV-PADI', category: 'tv', biller: 'DSTV', name: 'DStv Padi, 1 month', amount: 8_500 },
  { code: 'DSTV-COMPACT', category: 'tv', biller: 'DSTV', name: 'DStv Compact, 1 month', amount: 26_000 },
  { code: 'DSTV-PREMIUM', category: 'tv', biller: 'DSTV', name: 'DStv Premium, 1 month', amount: 76_000 },
  { code: 'GOTV-SMALLIE', category: 'tv', biller: 'GOTV', name: 'GOtv Smallie, 1 month', amount: 3_500 },
  { code: 'GOTV-MAX', category: 'tv', biller: 'GOTV', name: 'GOtv Max, 1 month', amount: 11_000 },
];

export const OPEN_AMOUNT_BILLERS: readonly OpenAmountBiller[] = [
  { category: 'airtime', biller: 'MTN', name: 'MTN airtime', min: 100, max: 50_000 },
  { category: 'airtime', biller: 'TELECEL', name: 'Telecel airtime', min: 100, max: 50_000 },
  { category: 'airtime', biller: 'AT', name: 'AT airtime', min: 100, max: 50_000 },
  { category: 'electricity', biller: 'ECG', name: 'ECG prepaid electricity (returns a token)', min: 500, max: 500_000 },
  { category: 'water', biller: 'GWCL', name: 'Ghana Water (GWCL)', min: 100, max: 500_000 },
];

export function productByCode(code: string): BillProduct | undefined {
  return BILL_PRODUCTS.find((p) => p.code === code);
}

export function openAmountBiller(category: BillCategory, biller: string): OpenAmountBiller | undefined {
  return OPEN_AMOUNT_BILLERS.find((b) => b.category === category && b.biller === biller);
}

/** The airtime and data biller of a network is the network itself. */
export function networkBiller(network: Network): string {
  return network;
}
