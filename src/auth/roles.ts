// Role separation for people sharing a merchant's account (spec 5.7): a key carries a role, and
// each route that moves money or changes the integration declares the area it belongs to.

export const ROLES = ['admin', 'finance', 'engineering'] as const;
export type Role = (typeof ROLES)[number];

/**
 * finance: wallet funding, charges, transfers, collections, payouts, bills, trades, settlements.
 * engineering: keys, webhooks, sandbox controls, scenarios, the requests inspector.
 * admin: the account itself (the service ladder); only admin keys.
 * A route with no area (shared read-only data: merchant, balances, objects, events) is open to every role.
 */
export type RouteArea = 'finance' | 'engineering' | 'admin';

export function roleAllows(role: Role, area: RouteArea | undefined): boolean {
  return role === 'admin' || area === undefined || area === role;
}
