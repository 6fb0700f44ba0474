import type { Operation } from './operations-of.ts';

export type Body = { kind: 'none' } | { kind: 'json'; value: unknown } | { kind: 'raw'; text: string };
export type SignMode = 'valid' | 'uppercase' | 'missing' | 'wrong' | 'stale' | 'future' | 'millis' | 'garbage-timestamp' | 'other-body' | 'other-path' | 'other-key' | 'empty';

/** A key and its signing secret, as the fuzzer signs with it. */
export interface Identity {
  key: string;
  secret: string;
  label: string;
}

/** A request being made up: what it will send, and what was broken in it. */
export interface Draft {
  op: Operation | null;
  /** Whether the method and path are the operation's own (not swapped for an undocumented one). */
  documented: boolean;
  method: string;
  path: string;
  pathParams: Record<string, { value: string; raw?: boolean }>;
  query: [string, string][];
  rawQuery: string | null;
  headers: Record<string, string | string[]>;
  body: Body;
  contentType: string | null;
  identity: Identity | null;
  authorization: string | null;
  idempotencyKey: string | string[] | null;
  sign: SignMode | null;
  labels: string[];
}
