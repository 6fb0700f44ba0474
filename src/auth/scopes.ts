export const SCOPES = ['read', 'trades:write', 'collections:write', 'transfers:write', 'webhooks:write'] as const;
export type Scope = (typeof SCOPES)[number];
