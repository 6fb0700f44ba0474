import { ValidationError } from './errors.ts';

// Ghana mobile numbers. Accepted as 0XXXXXXXXX, 233XXXXXXXXX or +233XXXXXXXXX; stored as
// 233XXXXXXXXX (E.164 without the plus, as MTN's partyId wants it).

export const NETWORKS = ['MTN', 'TELECEL', 'AT'] as const;
export type Network = (typeof NETWORKS)[number];

// libphonenumber's Ghana mobile pattern (national significant number, 9 digits).
const GH_MOBILE = /^(?:2(?:[0346-9]\d|5[67])|5(?:[03-7]\d|9[1-9]))\d{6}$/;

// Prefixes after the rebrands (Vodafone -> Telecel, AirtelTigo -> AT). 025 and 053 are MTN.
const PREFIX_NETWORK: Record<string, Network> = {
  '24': 'MTN',
  '25': 'MTN',
  '53': 'MTN',
  '54': 'MTN',
  '55': 'MTN',
  '59': 'MTN',
  '20': 'TELECEL',
  '50': 'TELECEL',
  '26': 'AT',
  '27': 'AT',
  '56': 'AT',
  '57': 'AT',
};

/** The normalised 233XXXXXXXXX form, or null when it is not a Ghana mobile number. */
export function normaliseMsisdn(input: string): string | null {
  const compact = input.replace(/[\s-]/g, '');
  const match = /^(?:\+233|233|0)(\d{9})$/.exec(compact);
  if (!match || !GH_MOBILE.test(match[1]!)) return null;
  return `233${match[1]}`;
}

/** The network a number was issued on, from its prefix. Ported numbers need an override. */
export function inferNetwork(normalised: string): Network | null {
  return PREFIX_NETWORK[normalised.slice(3, 5)] ?? null;
}

/** 233551234987 -> 0551234987 */
export function toLocalMsisdn(normalised: string): string {
  return `0${normalised.slice(3)}`;
}

/** The normalised number and its network (the override, else the prefix's), or a validation_error naming the field. */
export function resolveNetwork(msisdn: string, override: Network | undefined): { msisdn: string; network: Network } {
  const normalised = normaliseMsisdn(msisdn);
  if (!normalised) throw new ValidationError('msisdn is not a Ghana mobile number', [{ field: 'msisdn', message: 'not a Ghana mobile number' }]);
  const network = override ?? inferNetwork(normalised);
  if (!network) {
    throw new ValidationError(`The network of ${msisdn} cannot be inferred from its prefix; send network (MTN, TELECEL or AT)`, [{ field: 'network', message: 'required for this prefix' }]);
  }
  return { msisdn: normalised, network };
}
