import type { Rng } from '../seeded-random.ts';
import type { Draft } from './draft.ts';
import type { FuzzState } from './fuzz-state.ts';
import { MUTATORS } from './mutators.ts';
import type { Operation } from './operations-of.ts';
import { validPathValue, validQuery, validValue, type Gen } from './valid-value.ts';

export function draftRequest(rng: Rng, operations: Operation[], state: FuzzState, seed: number): Draft {
  // Often follow a creation with an operation on what it created: execute a fresh quote,
  // review a fresh trade, rotate a fresh endpoint's secret.
  const followers = state.fresh ? operations.filter((o) => o.consumes.has(state.fresh!)) : [];
  const following = followers.length > 0 && rng.chance(0.5);
  const op = following ? rng.pick(followers) : rng.pick(operations);
  const gen: Gen = { rng, state };
  const draft: Draft = {
    op,
    documented: true,
    method: op.method,
    path: op.path,
    pathParams: Object.fromEntries(op.pathParams.map((p) => [p.name, { value: validPathValue(gen, p) }])),
    query: validQuery(gen, op),
    rawQuery: null,
    headers: {},
    body: op.body ? { kind: 'json', value: validValue(gen, op.body, '', undefined) } : { kind: 'none' },
    contentType: op.body ? 'application/json' : null,
    identity: state.identities[0]!,
    authorization: null,
    idempotencyKey: op.idempotent ? `fz-${seed}-${rng.below(2 ** 31).toString(36)}-${rng.below(2 ** 31).toString(36)}` : null,
    sign: op.signed ? 'valid' : null,
    labels: [],
  };
  // A quarter valid-looking (most follow-ups, so that objects get further along their life);
  // the rest break one to three things.
  const roll = rng.next();
  const count = roll < (following ? 0.6 : 0.25) ? 0 : roll < 0.75 ? 1 : roll < 0.93 ? 2 : 3;
  for (let i = 0; i < count; i++) {
    const applicable = MUTATORS.filter((m) => m.applies(draft));
    rng.weighted(applicable.map((m) => [m, m.weight] as const)).apply(draft, gen);
  }
  // Half the requests to signed operations carry a bad signature, the other half a good one.
  if (op.signed && draft.sign === 'valid' && rng.chance(0.5)) {
    // 'uppercase' is a good signature in upper-case hex, which the server must accept.
    draft.sign = rng.pick(['missing', 'wrong', 'stale', 'future', 'millis', 'garbage-timestamp', 'other-body', 'other-path', 'other-key', 'empty', 'uppercase'] as const);
    draft.labels.push(`signature: ${draft.sign}`);
  }
  return draft;
}
