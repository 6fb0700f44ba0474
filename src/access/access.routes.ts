import { z } from 'zod';
import type { ApiKeyService, AuthContext, KeyRecord } from '../auth/api-key-service.ts';
import { allowlistEntryProblem, MAX_ALLOWLIST_ENTRIES } from '../auth/ip-allowlist.ts';
import { ROLES } from '../auth/roles.ts';
import { SCOPES } from '../auth/scopes.ts';
import { LADDER_ACTIONS, STAGES, type ServiceLadder } from '../auth/service-ladder.ts';
import { ok, envelopeOf } from '../http/envelope.ts';
import { findById, pathIdParams } from '../http/find-by-id.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { iso } from '../kernel/clock.ts';
import { ForbiddenError } from '../kernel/errors.ts';

const environmentSchema = z.object({ enabled: z.boolean(), unlocks: z.array(z.string()).describe('What this environment gives once enabled') });

export const merchantSchema = z.object({
  id: z.string(),
  name: z.string(),
  stage: z.enum(STAGES).describe('Where the merchant is on the service ladder'),
  environments: z.object({ test: environmentSchema, live: environmentSchema }),
  next_action: z.enum(LADDER_ACTIONS).nullable().describe('The one action POST /api/v1/merchant/ladder accepts now; null once live'),
  compliance: z
    .object({
      trading_allowed: z.boolean().describe("Whether quotes and trades with the calling key's environment pass the ladder check"),
      reason: z.string().nullable().describe('Why they answer compliance_block (reason service_not_enabled), or null'),
    })
    .describe("For the calling key's environment"),
});

const allowlistEntries = z
  .array(
    z.string().superRefine((entry, ctx) => {
      const problem = allowlistEntryProblem(entry);
      if (problem) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(entry.slice(0, 60))} ${problem}` });
    }),
  )
  .max(MAX_ALLOWLIST_ENTRIES, `at most ${MAX_ALLOWLIST_ENTRIES} entries`)
  .describe('IPv4/IPv6 addresses or CIDR blocks (203.0.113.7, 203.0.113.0/24, 2001:db8::/32); empty: any address');

export const keySchema = z.object({
  id: z.string().describe('key_...'),
  object: z.literal('api_key'),
  environment: z.enum(['test', 'live']),
  key_hint: z.string().describe('The first 12 and last 4 characters; the key itself is stored only as a hash'),
  scopes: z.array(z.enum(SCOPES)),
  role: z.enum(ROLES),
  ip_allowlist: z.array(z.string()),
  created_at: z.string(),
  revoked_at: z.string().nullable(),
  current: z.boolean().describe('true for the key making this request'),
});
type KeyView = z.infer<typeof keySchema>;

const keyId = pathIdParams('id', 'API key', 'key_0000000000aaaaaaaaaa');

const present = (k: KeyRecord, auth: AuthContext): KeyView => ({
  id: k.id,
  object: 'api_key',
  environment: k.environment,
  key_hint: k.keyHint,
  scopes: k.scopes,
  role: k.role,
  ip_allowlist: k.ipAllowlist,
  created_at: iso(k.createdAt),
  revoked_at: k.revokedAt === null ? null : iso(k.revokedAt),
  current: k.id === auth.keyId,
});

const LADDER_DESCRIPTION = [
  'The service ladder (spec sections 1 and 5): `request_access` (none -> requested), then `enable_sandbox` (requested -> sandbox),',
  'then `go_live` (sandbox -> live). Test keys trade from the sandbox stage on, live keys only at live; before that, quotes and',
  'trades answer 403 compliance_block with reason service_not_enabled. Any other action than next_action is 409 ladder_out_of_order',
  '(details: stage, action, expected_action) and changes nothing. Only admin keys move the ladder (role_forbidden otherwise).',
  'POST /api/v1/sandbox/merchant/trading still sets any stage directly, for tests.',
].join(' ');

const KEYS_DESCRIPTION = [
  'Keys carry scopes, a role and an IP allowlist. Roles: `admin` (everything its scopes allow), `finance` (wallet funding, charges,',
  'transfers, collections, payouts, bills, trades, settlements) and `engineering` (keys, webhooks, sandbox controls, scenarios, the',
  'requests inspector); a route outside the role answers 403 role_forbidden (details: role, area), and read-only shared data',
  '(merchant, balances, objects, events) is open to every role. A key with a non-empty IP allowlist is refused from any other',
  'address with 403 ip_not_allowed (details: ip); the address is the TCP peer, or X-Forwarded-For when server.trust_proxy is configured.',
  'A key can only issue or manage keys whose scopes it holds, and a non-admin key only keys of its own role.',
].join(' ');

/** The access-control API: the service ladder and key management. */
export function accessRoutes(deps: { apiKeys: ApiKeyService; ladder: ServiceLadder }): RouteSpec[] {
  const { apiKeys, ladder } = deps;

  /** The caller may manage a key only if it holds the key's scopes and, unless admin, shares its role. */
  const assertCanManage = (auth: AuthContext, target: { scopes: readonly string[]; role: string }) => {
    const beyond = target.scopes.filter((s) => !auth.scopes.includes(s as (typeof SCOPES)[number]));
    if (beyond.length) throw new ForbiddenError(`This key cannot manage a key with scopes it does not hold: ${beyond.join(', ')}`, { scopes: beyond });
    if (auth.role !== 'admin' && target.role !== auth.role) {
      throw new ForbiddenError(`A ${auth.role} key can only manage ${auth.role} keys`, { role: auth.role, key_role: target.role });
    }
  };
  const managed = async (auth: AuthContext, id: string) => {
    const key = await findById('API key', id, () => apiKeys.get(auth.merchantId, id));
    assertCanManage(auth, key);
    return key;
  };

  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/merchant',
      operationId: 'getMerchant',
      summary: 'The merchant: its stage on the service ladder, what each environment unlocks, and the next step',
      description: LADDER_DESCRIPTION,
      tag: 'Access',
      scope: 'read',
      response: { status: 200, description: 'The merchant', schema: envelopeOf(merchantSchema) },
      errors: ['forbidden'],
      handler: async ({ auth }) => ({ status: 200, body: ok('Merchant', await ladder.view(auth.merchantId, auth.environment)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/merchant/ladder',
      operationId: 'advanceServiceLadder',
      summary: 'Take the next step on the service ladder: request_access, then enable_sandbox, then go_live',
      description: LADDER_DESCRIPTION,
      tag: 'Access',
      area: 'admin',
      body: z.strictObject({ action: z.enum(LADDER_ACTIONS, { error: `action must be one of ${LADDER_ACTIONS.join(', ')}` }) }),
      response: { status: 200, description: 'The merchant after the step', schema: envelopeOf(merchantSchema) },
      errors: ['ladder_out_of_order'],
      handler: async ({ auth, body }) => ({
        status: 200,
        body: ok(`Ladder: ${body.action}`, await ladder.advanceInTransaction(auth.merchantId, auth.environment, body.action)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/keys',
      operationId: 'listKeys',
      summary: "This merchant's API keys of both environments (never a key or a secret); current marks the calling key",
      description: `${KEYS_DESCRIPTION} A finance key sees only itself here, so any client can learn its own role and allowlist.`,
      tag: 'Access',
      response: { status: 200, description: 'The keys, oldest first', schema: envelopeOf(z.array(keySchema)) },
      errors: [],
      handler: async ({ auth }) => {
        const keys = await apiKeys.list(auth.merchantId);
        const visible = auth.role === 'finance' ? keys.filter((k) => k.id === auth.keyId) : keys;
        return {
          status: 200,
          body: ok(
            'API keys',
            visible.map((k) => present(k, auth)),
          ),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/keys',
      operationId: 'createKey',
      summary: 'Issue an API key with scopes, a role and an IP allowlist; the key and its signing secret are shown only now',
      description: KEYS_DESCRIPTION,
      tag: 'Access',
      area: 'engineering',
      body: z.strictObject({
        environment: z.enum(['test', 'live'], { error: 'environment must be test or live' }),
        scopes: z.array(z.enum(SCOPES, { error: `each scope must be one of ${SCOPES.join(', ')}` })).min(1, 'name at least one scope'),
        role: z
          .enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` })
          .optional()
          .describe("Default: the calling key's role"),
        ip_allowlist: allowlistEntries.optional(),
      }),
      response: {
        status: 201,
        description: 'The new key, with the key and signing secret shown once',
        schema: envelopeOf(keySchema.extend({ key: z.string(), signing_secret: z.string() })),
      },
      errors: ['forbidden', 'role_forbidden'],
      handler: async ({ body, auth }) => {
        const role = body.role ?? auth.role;
        const scopes = [...new Set(body.scopes)];
        assertCanManage(auth, { scopes, role });
        const issued = await apiKeys.issueInTransaction({
          merchantId: auth.merchantId,
          environment: body.environment,
          scopes,
          role,
          ipAllowlist: [...new Set(body.ip_allowlist ?? [])],
        });
        const key = await apiKeys.get(auth.merchantId, issued.id);
        return { status: 201, body: ok('Key issued; store the key now, it is not shown again', { ...present(key, auth), key: issued.key, signing_secret: issued.signingSecret }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/keys/:id/revoke',
      operationId: 'revokeKey',
      summary: 'Revoke a key: its next request answers 401. Revoking again changes nothing',
      description: KEYS_DESCRIPTION,
      tag: 'Access',
      area: 'engineering',
      params: keyId,
      response: { status: 200, description: 'The revoked key', schema: envelopeOf(keySchema) },
      errors: ['forbidden', 'role_forbidden', 'not_found'],
      handler: async ({ params, auth }) => {
        await managed(auth, params.id);
        return { status: 200, body: ok('Key revoked', present(await apiKeys.revoke(auth.merchantId, params.id), auth)) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/keys/:id/ip_allowlist',
      operationId: 'setKeyIpAllowlist',
      summary: "Replace a key's IP allowlist; an empty list accepts any address",
      description: KEYS_DESCRIPTION,
      tag: 'Access',
      area: 'engineering',
      params: keyId,
      body: z.strictObject({ entries: allowlistEntries }),
      response: { status: 200, description: 'The key with its new allowlist', schema: envelopeOf(keySchema) },
      errors: ['forbidden', 'role_forbidden', 'not_found'],
      handler: async ({ params, body, auth }) => {
        await managed(auth, params.id);
        return { status: 200, body: ok('IP allowlist set', present(await apiKeys.setIpAllowlist(auth.merchantId, params.id, [...new Set(body.entries)]), auth)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/keys/:id/signing_secret',
      operationId: 'revealKeySigningSecret',
      summary: "Reveal a key's request-signing secret (an explicit action; nothing else ever shows it after creation)",
      description: `${KEYS_DESCRIPTION} Only keys of the calling key's environment: a test key never reveals a live secret.`,
      tag: 'Access',
      area: 'engineering',
      params: keyId,
      response: { status: 200, description: 'The signing secret', schema: envelopeOf(z.object({ id: z.string(), signing_secret: z.string() })) },
      errors: ['forbidden', 'role_forbidden', 'not_found'],
      handler: async ({ params, auth }) => {
        const key = await managed(auth, params.id);
        if (key.environment !== auth.environment) {
          throw new ForbiddenError(`A ${auth.environment} key cannot reveal the signing secret of a ${key.environment} key`, { environment: key.environment });
        }
        return { status: 200, body: ok('Signing secret', { id: key.id, signing_secret: await apiKeys.signingSecret(auth.merchantId, key.id) }) };
      },
    }),
  ];
}
