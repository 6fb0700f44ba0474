import { bankRailWire } from '../providers/bank-rail/recorder.ts';
import { hubtelWire } from '../providers/hubtel/recorder.ts';
import { mtnMomoWire } from '../providers/mtn-momo/recorder.ts';
import { paystackWire } from '../providers/paystack/recorder.ts';
import type { WireProfile } from './wire-profile.ts';

/** The upstreams railyard can record; a new provider adds its wire profile here. */
export const WIRE_PROFILES: Readonly<Record<string, WireProfile>> = {
  [mtnMomoWire.provider]: mtnMomoWire,
  [hubtelWire.provider]: hubtelWire,
  [bankRailWire.provider]: bankRailWire,
  [paystackWire.provider]: paystackWire,
};

/**
 * Thrown for a provider railyard cannot record: it may well be a known provider (the registry's
 * UnknownProviderError is for names it does not know), only one without a wire profile.
 */
export class NoWireProfileError extends Error {
  constructor(readonly provider: string) {
    super(`no recorder for provider ${JSON.stringify(provider)}: one of ${Object.keys(WIRE_PROFILES).join(', ')}`);
    this.name = 'NoWireProfileError';
  }
}

export function wireProfileFor(provider: string): WireProfile {
  const profile = WIRE_PROFILES[provider];
  if (!profile) throw new NoWireProfileError(provider);
  return profile;
}
