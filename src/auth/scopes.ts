export const SCOPES = ['read', 'trades:write', 'collections:write', 'transfers:write'] as const;
export type Scope = (typeof SCOPES)[number];
