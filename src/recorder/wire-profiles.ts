import { PROVIDERS } from '../providers/index.ts';
import type { WireProfile } from '../providers/wire-profile.ts';

/** The upstreams railyard can record: every provider whose folder has a recorder wire profile. */
export const WIRE_PROFILES: Readonly<Record<string, WireProfile>> = Object.fromEntries(PROVIDERS.flatMap((p) => (p.recorder ? [[p.id, p.recorder] as const] : [])));

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
