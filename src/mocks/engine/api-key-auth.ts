import type { Request } from 'express';
import { safeEqual } from '../../kernel/secrets.ts';
import type { WireAuth, WireError } from './define-wire.ts';

// The simplest upstream auth, a static API key on every call, checked in constant time. A wire
// names where its key goes and how it refuses; the comparison is the engine's.

/** `Authorization: Bearer <key>` with the wire's key (`keyOf` its settings), else `refusal`. */
export function bearerKey<Settings>(keyOf: (settings: Settings) => string, refusal: WireError): WireAuth<Settings> {
  return (req, settings) => (presentedKeyMatches(/^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1], keyOf(settings)) ? null : refusal);
}

/** The wire's key in a header of its own (`X-Api-Key`), else `refusal`. */
export function headerKey<Settings>(header: string, keyOf: (settings: Settings) => string, refusal: WireError): WireAuth<Settings> {
  return (req: Request, settings) => (presentedKeyMatches(req.get(header), keyOf(settings)) ? null : refusal);
}

function presentedKeyMatches(presented: string | undefined, key: string): boolean {
  return presented !== undefined && presented !== '' && safeEqual(presented, key);
}
