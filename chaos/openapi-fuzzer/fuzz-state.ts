// What the run has learned: ids to point at, cursors, keys.
import type { Draft, Identity } from './draft.ts';
import { parseJson, type Json } from './json-text.ts';
import { ID_PATTERN } from './operations-of.ts';
import type { WireRequest, WireResponse } from './send-request.ts';

export interface Harvested {
  id: string;
  /** The object the id was found in (a quote's network and side, say). */
  object: Json;
}

export interface FuzzState {
  /** By id prefix: chg, trf, qt, trd, we, evt, wd... */
  pools: Map<string, Harvested[]>;
  cursors: string[];
  identities: Identity[];
  /** Idempotency-Keys sent to idempotent operations, for reuse. */
  idempotent: { operationId: string; key: string; body: string | undefined }[];
  /** The prefix of the object the last request created, if it did: the next may well use it. */
  fresh: string | null;
}

const POOL_SIZE = 200;

function remember<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > POOL_SIZE) list.splice(0, list.length - POOL_SIZE);
}

export function harvest(state: FuzzState, draft: Draft, wire: WireRequest, res: WireResponse): void {
  if (draft.op?.idempotent && draft.idempotencyKey !== null && typeof draft.idempotencyKey === 'string' && draft.idempotencyKey.length > 0) {
    remember(state.idempotent, { operationId: draft.op.operationId, key: draft.idempotencyKey, body: wire.body });
  }
  state.fresh = null;
  if (res.status >= 300) return;
  const body = parseJson(res.text) as Json | undefined;
  if (!body) return;
  const created = ID_PATTERN.exec(String(body.data?.reference ?? body.data?.id ?? ''));
  if (created && wire.method !== 'GET') state.fresh = created[1]!;
  if (typeof body.meta?.next_cursor === 'string') remember(state.cursors, body.meta.next_cursor);
  const data = body.data;
  if (draft.op?.operationId === 'sandboxCreateKey' && typeof data?.key === 'string' && typeof data?.signing_secret === 'string') {
    remember(state.identities, { key: data.key, secret: data.signing_secret, label: `a harvested ${data.environment} key (${(data.scopes ?? []).join(' ')})` });
  }
  const walk = (node: unknown, depth: number): void => {
    if (depth > 4 || !node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node.slice(0, 50)) walk(n, depth + 1);
      return;
    }
    for (const value of Object.values(node as Json)) {
      const match = typeof value === 'string' ? ID_PATTERN.exec(value) : null;
      if (match) {
        const pool = state.pools.get(match[1]!) ?? [];
        if (!pool.some((h) => h.id === value)) remember(pool, { id: value as string, object: node as Json });
        state.pools.set(match[1]!, pool);
      } else walk(value, depth + 1);
    }
  };
  walk(data, 0);
}
