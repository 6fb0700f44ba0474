// The context moved into the engine; this path stays for callers written before it.
export type { MockContext } from './engine/mock-context.ts';
