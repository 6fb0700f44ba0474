import { z } from 'zod';
import { NETWORKS } from '../kernel/msisdn.ts';

const callback = z.strictObject({
  after_seconds: z.number().min(0).max(30 * 24 * 3600).default(3).describe('Business seconds after acceptance'),
  status: z.enum(['success', 'failed']),
  reason: z.string().min(1).optional().describe('Upstream reason code when failed, e.g. NOT_ENOUGH_FUNDS'),
  drop: z.boolean().default(false).describe('Settle without calling back: only a status poll finds out'),
});

export const behaviourSchema = z.strictObject({
  respond: z.enum(['accept', 'reject', 'timeout', 'server_error']).default('accept'),
  reason: z.string().min(1).optional(),
  http_status: z.number().int().min(400).max(599).optional(),
  latency_ms: z.number().int().min(0).max(60_000).optional(),
  callback: callback.optional(),
  resolves: z.boolean().optional().describe('resolve only: false means no such wallet or account'),
  name: z.string().min(1).optional().describe('resolve only: the account holder name'),
});

const PROVIDERS = ['mtn-momo', 'hubtel', 'bank-rail', 'any'] as const;

/** Behaviour per provider; `any` covers providers not named. */
const perProvider = z
  .strictObject(Object.fromEntries(PROVIDERS.map((p) => [p, behaviourSchema.optional()])) as Record<(typeof PROVIDERS)[number], z.ZodOptional<typeof behaviourSchema>>)
  .refine((v) => Object.values(v).some(Boolean), 'name at least one provider (mtn-momo, hubtel, bank-rail) or any');

export const matchSchema = z
  .strictObject({
    msisdn: z.string().min(1).optional().describe('Any of 0XXXXXXXXX, 233XXXXXXXXX, +233XXXXXXXXX, or a foreign test number as sent'),
    account_number: z.string().min(1).optional(),
    bank_code: z.string().regex(/^\d{6}$/, 'a GhIPSS code is 6 digits').optional(),
    network: z.enum(NETWORKS).optional(),
    channel: z.enum(['momo', 'bank']).optional(),
  })
  .refine((m) => Object.values(m).some((v) => v !== undefined), 'match needs at least one field');

export const ruleSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string().optional(),
  match: matchSchema,
  collect: perProvider.optional(),
  payout: perProvider.optional(),
  resolve: perProvider.optional(),
});

export const scenarioFileSchema = z.strictObject({
  version: z.literal(1),
  name: z.string().min(1),
  description: z.string().optional(),
  rules: z.array(ruleSchema).default([]),
});

export type ScenarioRule = z.infer<typeof ruleSchema>;
export type ScenarioFile = z.infer<typeof scenarioFileSchema>;
export type Behaviour = z.infer<typeof behaviourSchema>;
