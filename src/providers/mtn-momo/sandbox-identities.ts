import { z } from 'zod';
import { normaliseMsisdn, toLocalMsisdn } from '../../kernel/msisdn.ts';

// MTN's real sandbox knows only its own test numbers (46733123450 to …463, reference §1) and
// takes only EUR, while the merchant API takes Ghana numbers and GHS. These are the service's own
// test identities mapped to MTN's: the adapter translates on the way out, the recorder maps what
// it saw back, and the merchant sees only Ghana numbers and GHS.

/**
 * The documented default map: the sandbox's success and insufficient-funds numbers, then one
 * Ghana number for each of MTN's other documented test numbers (0241234551 → 46733123451, ...).
 * 46733123400 is no documented number: MTN's "any other number results in Success".
 */
export const MTN_DEFAULT_IDENTITIES: Readonly<Record<string, string>> = {
  '0551234987': '46733123400', // success
  '0551234988': '46733123450', // PayerFailed / PayeeFailed: FAILED INTERNAL_PROCESSING_ERROR (mostly insufficient funds)
  ...Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`02412345${51 + i}`, `467331234${51 + i}`])),
};

/** Sandbox currency units per 1 GHS, by default: a stated, fixed rate, not a market one. */
export const MTN_DEFAULT_SANDBOX_RATE = '0.08';

const ROUNDINGS = ['down', 'half_up', 'up'] as const;
type Rounding = (typeof ROUNDINGS)[number];

/** `providers.mtn-momo.sandbox_identities` in railyard.yaml. */
export const sandboxIdentitiesSchema = z
  .strictObject({
    msisdns: z
      .record(z.string(), z.string().regex(/^\d{5,15}$/, 'an upstream test number is digits only, with its country code'))
      .default(MTN_DEFAULT_IDENTITIES)
      .describe('Ghana number (any form) to the upstream test number it stands for'),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/)
      .default('EUR')
      .describe("the sandbox's currency"),
    rate: z
      .string()
      .regex(/^\d+(?:\.\d+)?$/, 'a decimal string')
      .refine((r) => /[1-9]/.test(r), 'a rate above zero')
      .default(MTN_DEFAULT_SANDBOX_RATE)
      .describe('sandbox currency units per 1 GHS'),
    rounding: z.enum(ROUNDINGS).default('half_up').describe('of the converted amount, to the sandbox currency’s cent'),
  })
  .superRefine((block, check) => {
    const seen = new Map<string, string>();
    for (const [ghana, upstream] of Object.entries(block.msisdns)) {
      if (!normaliseMsisdn(ghana)) check.addIssue({ code: 'custom', path: ['msisdns', ghana], message: `${ghana} is not a Ghana mobile number` });
      // Mapped back, an upstream number must name one Ghana number only.
      const other = seen.get(upstream);
      if (other) check.addIssue({ code: 'custom', path: ['msisdns', ghana], message: `${upstream} already stands for ${other}` });
      seen.set(upstream, ghana);
    }
  });
export type SandboxIdentitiesOptions = z.output<typeof sandboxIdentitiesSchema>;

/** A GHS amount as the sandbox takes it: a major-unit string in its currency. */
export interface SandboxAmount {
  amount: string;
  currency: string;
}

/** The translation between the merchant's identities and the sandbox's, both ways. */
export class SandboxIdentities {
  private readonly toUpstream = new Map<string, string>();
  private readonly toMerchant = new Map<string, string>();
  private readonly rateNumerator: bigint;
  private readonly rateDenominator: bigint;

  constructor(private readonly options: SandboxIdentitiesOptions) {
    for (const [ghana, upstream] of Object.entries(options.msisdns)) {
      const normalised = normaliseMsisdn(ghana)!;
      this.toUpstream.set(normalised, upstream);
      this.toMerchant.set(upstream, normalised);
    }
    const [whole, fraction = ''] = options.rate.split('.');
    this.rateNumerator = BigInt(`${whole}${fraction}`);
    this.rateDenominator = 10n ** BigInt(fraction.length);
  }

  get currency(): string {
    return this.options.currency;
  }

  /** The test number a Ghana number (233…) stands for; a number the map lacks goes as it is. */
  upstreamMsisdn(msisdn: string): string {
    return this.toUpstream.get(normaliseMsisdn(msisdn) ?? msisdn) ?? msisdn;
  }

  /** The Ghana number (233…) a test number stands for; undefined when it is not in the map. */
  merchantMsisdn(upstream: string): string | undefined {
    return this.toMerchant.get(upstream);
  }

  /**
   * Pesewas to the sandbox currency's cents (two decimals on both sides), at the stated rate and
   * rounding, in integers; never below one cent, since MTN refuses an amount of zero.
   */
  upstreamAmount(pesewas: number): SandboxAmount {
    const product = BigInt(pesewas) * this.rateNumerator;
    const cents = roundDivision(product, this.rateDenominator, this.options.rounding);
    const atLeastOne = cents < 1n ? 1n : cents;
    return { amount: `${atLeastOne / 100n}.${String(atLeastOne % 100n).padStart(2, '0')}`, currency: this.options.currency };
  }

  /** How the recording log shows a mapped number: the merchant's, then the sandbox's. */
  describe(upstream: string): string | undefined {
    const merchant = this.merchantMsisdn(upstream);
    return merchant ? `${toLocalMsisdn(merchant)} as ${upstream}` : undefined;
  }
}

function roundDivision(numerator: bigint, denominator: bigint, rounding: Rounding): bigint {
  const quotient = numerator / denominator;
  const remainder = numerator % denominator;
  if (remainder === 0n) return quotient;
  switch (rounding) {
    case 'down':
      return quotient;
    case 'up':
      return quotient + 1n;
    case 'half_up':
      return remainder * 2n >= denominator ? quotient + 1n : quotient;
  }
}

/**
 * The translation an adapter applies: only when identities are configured and the adapter calls
 * an upstream outside railyard (a base URL). The in-process mock speaks Ghana numbers and GHS, so
 * a recorded scenario plays back on it with the same railyard.yaml.
 */
export function sandboxIdentitiesFor(options: { base_url?: string | undefined; sandbox_identities?: SandboxIdentitiesOptions | undefined }): SandboxIdentities | undefined {
  return options.base_url && options.sandbox_identities ? new SandboxIdentities(options.sandbox_identities) : undefined;
}
