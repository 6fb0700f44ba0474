// `railyard scenarios lint`, also run whenever scenario files load: what a file says that cannot
// do what its author meant. A rule whose predicates no call can satisfy, a rule that an earlier
// one always answers first, a field that changes nothing. The checks are pure functions of the
// parsed file; positions come from the YAML source.

import { isGhipssCode } from '../kernel/banks.ts';
import { inferNetwork, NETWORKS, normaliseMsisdn } from '../kernel/msisdn.ts';
import { apiRuleFindings } from './api-rule-lint.ts';
import type { Behaviour, MatchBlock, Predicate, ScenarioFile, ScenarioRule, ScenarioSchema } from './scenario-schema.ts';

export type LintSeverity = 'error' | 'warning';
/** invalid: the file does not load; the others are about a file that does. */
export type LintCode = 'invalid' | 'unmatchable' | 'ported-network' | 'shadowed' | 'no-effect';

/**
 * error: the file does not load, or a rule (or one of its parts) can never match any call.
 * warning: it loads and can match, but something in it does nothing or matches less than it says.
 */
export interface LintProblem {
  file: string;
  line: number;
  column: number;
  severity: LintSeverity;
  code: LintCode;
  message: string;
  /** The rule's 0-based place in its file; null for the file as a whole. */
  rule: number | null;
}

type Path = (string | number)[];
export type Locate = (path: Path) => { line: number; col: number };

const CHANNELS = ['momo', 'bank', 'card', 'bank_debit', 'bills'] as const;
const OPERATIONS = ['collect', 'payout', 'resolve'] as const;

/** The values an equals or one_of predicate names; undefined for prefix, regex and range. */
function listed(p: Predicate): (string | number)[] | undefined {
  if (p.equals !== undefined) return [p.equals];
  if (p.one_of !== undefined) return p.one_of;
  return undefined;
}

const GH_MOBILE_SHAPED = /^(?:\+233|233|0)/;

/** Can some Ghana mobile number, read as 0XXXXXXXXX, start with `prefix`? */
function ghanaPrefixPossible(prefix: string): boolean {
  if (!/^0\d{0,9}$/.test(prefix)) return false;
  const rest = prefix.slice(1);
  // Only the first three digits after 0 decide validity; try every completion of them.
  const head = rest.slice(0, 3);
  const tail = rest.slice(3).padEnd(6, '0');
  const free = 3 - head.length;
  for (let n = 0; n < 10 ** free; n++) {
    const digits = head + (free ? String(n).padStart(free, '0') : '') + tail;
    if (normaliseMsisdn(`0${digits}`)) return true;
  }
  return false;
}

interface Finding {
  path: Path;
  severity: LintSeverity;
  code: Exclude<LintCode, 'invalid'>;
  message: string;
}

/** Where a predicate sits decides how bad a predicate that never holds is. */
type Context = 'all' | 'any' | 'not';

function neverHolds(context: Context, path: Path, what: string): Finding {
  if (context === 'all') return { path, severity: 'error', code: 'unmatchable', message: `${what}, so the rule never matches` };
  if (context === 'any') return { path, severity: 'warning', code: 'no-effect', message: `${what}, so this branch of any never holds` };
  return { path, severity: 'warning', code: 'no-effect', message: `${what}, so this not block excludes nothing` };
}

function msisdnFindings(p: Predicate, path: Path, context: Context): Finding[] {
  const out: Finding[] = [];
  for (const [i, value] of (listed(p) ?? []).entries()) {
    const at = p.one_of ? [...path, 'one_of', i] : path;
    const text = String(value);
    if (normaliseMsisdn(text)) continue;
    const compact = text.replace(/[\s-]/g, '');
    if (GH_MOBILE_SHAPED.test(compact)) {
      const lead = /^(?:\+233|233|0)/.exec(compact)![0];
      const digits = compact.slice(lead.length);
      const why = digits.length !== 9 ? `has ${digits.length} digits after its ${lead}, where a Ghana mobile number has 9` : `has no Ghana mobile prefix (0${digits.slice(0, 2)})`;
      out.push(neverHolds(context, at, `msisdn ${text} ${why}; railyard refuses such a number before any provider sees it`));
    } else {
      out.push({ path: at, severity: 'warning', code: 'no-effect', message: `msisdn ${text} is not a Ghana mobile number: only a call made straight to a mock with exactly this number can match it` });
    }
  }
  if (p.prefix !== undefined) {
    const prefix = p.prefix;
    if (/^\+?233/.test(prefix)) {
      out.push(neverHolds(context, [...path, 'prefix'], `prefix ${prefix} never holds: prefix reads a Ghana number as 0XXXXXXXXX (write prefix: "0${prefix.replace(/^\+?233/, '')}")`));
    } else if (prefix.startsWith('0')) {
      if (!ghanaPrefixPossible(prefix)) out.push(neverHolds(context, [...path, 'prefix'], `no Ghana mobile number starts with ${prefix}`));
    } else {
      out.push({
        path: [...path, 'prefix'],
        severity: 'warning',
        code: 'no-effect',
        message: `prefix ${prefix} matches no Ghana mobile number (read as 0XXXXXXXXX): only calls made straight to a mock with other numbers`,
      });
    }
  }
  return out;
}

/** The networks an msisdn predicate's numbers were issued on, by prefix; empty when unknown. */
function networksOf(p: Predicate): Set<string> {
  const out = new Set<string>();
  for (const value of listed(p) ?? []) {
    const normalised = normaliseMsisdn(String(value));
    const network = normalised && inferNetwork(normalised);
    if (network) out.add(network);
  }
  if (p.prefix !== undefined && /^0\d{2}/.test(p.prefix)) {
    const network = inferNetwork(`233${p.prefix.slice(1, 3)}`);
    if (network) out.add(network);
  }
  return out;
}

function valuesFindings(p: Predicate, path: Path, context: Context, field: string, known: readonly string[]): Finding[] {
  return (listed(p) ?? []).flatMap((value, i) =>
    known.includes(String(value)) ? [] : [neverHolds(context, p.one_of ? [...path, 'one_of', i] : path, `${field} ${String(value)} is none of ${known.join(', ')}`)],
  );
}

/** The providers a rule answers for, per operation ('any' for the ones not named). */
function speaksFor(rule: ScenarioRule): { op: (typeof OPERATIONS)[number]; provider: string }[] {
  return OPERATIONS.flatMap((op) =>
    Object.entries(rule[op] ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([provider]) => ({ op, provider })),
  );
}

/** `names`: the providers a `provider` predicate may list. */
function matchFindings(rule: ScenarioRule, block: MatchBlock, path: Path, context: Context, names: readonly string[]): Finding[] {
  const out: Finding[] = [];
  if (block.msisdn) out.push(...msisdnFindings(block.msisdn, [...path, 'msisdn'], context));
  if (block.network) out.push(...valuesFindings(block.network, [...path, 'network'], context, 'network', NETWORKS));
  if (block.channel) out.push(...valuesFindings(block.channel, [...path, 'channel'], context, 'channel', CHANNELS));
  if (block.provider) out.push(...valuesFindings(block.provider, [...path, 'provider'], context, 'provider', names));
  if (block.bank_code) {
    const codes = listed(block.bank_code);
    for (const [i, code] of (codes ?? []).entries()) {
      if (!isGhipssCode(String(code))) {
        const at = block.bank_code.one_of ? [...path, 'bank_code', 'one_of', i] : [...path, 'bank_code'];
        out.push(neverHolds(context, at, `bank_code ${String(code)} is no GhIPSS institution code (src/kernel/banks.ts); the API and the bank mocks refuse it`));
      }
    }
  }
  const range = block.amount?.range;
  if (range?.min !== undefined && range.max !== undefined && range.min > range.max) {
    out.push(neverHolds(context, [...path, 'amount', 'range'], `amount range min ${range.min} is above max ${range.max}`));
  }
  // A network that contradicts the number's prefix: the API lets a charge name the network of a
  // ported number, so the rule can match, but only such a call, and never at mtn-momo.
  const networks = block.network
    ? listed(block.network)
        ?.map(String)
        .filter((n) => (NETWORKS as readonly string[]).includes(n))
    : undefined;
  const issued = block.msisdn ? networksOf(block.msisdn) : new Set<string>();
  if (networks?.length && issued.size && !networks.some((n) => issued.has(n))) {
    out.push({
      path: [...path, 'network'],
      severity: 'warning',
      code: 'ported-network',
      message: `network ${networks.join(', ')} contradicts the number's prefix (${[...issued].join(', ')}): the rule matches only a call that names network ${networks.join(' or ')} for a ported number, and never at mtn-momo`,
    });
  }
  if (networks && !networks.includes('MTN')) {
    const providers = new Set(speaksFor(rule).map((s) => s.provider));
    if (providers.size === 1 && providers.has('mtn-momo')) {
      out.push(neverHolds(context, [...path, 'network'], `the rule speaks only for mtn-momo, whose calls always carry network MTN, not ${networks.join(', ')}`));
    }
  }
  const providers = block.provider ? listed(block.provider)?.map(String) : undefined;
  if (context === 'all' && providers?.length) {
    const answered = speaksFor(rule);
    if (!answered.some((s) => s.provider === 'any' || providers.includes(s.provider))) {
      out.push(neverHolds(context, [...path, 'provider'], `the rule matches provider ${providers.join(', ')} but answers only for ${[...new Set(answered.map((s) => s.provider))].join(', ')}`));
    }
  }
  for (const [i, b] of (block.all ?? []).entries()) out.push(...matchFindings(rule, b, [...path, 'all', i], context, names));
  for (const [i, b] of (block.any ?? []).entries()) out.push(...matchFindings(rule, b, [...path, 'any', i], context === 'all' ? 'any' : context, names));
  if (block.not) out.push(...matchFindings(rule, block.not, [...path, 'not'], context === 'not' ? 'all' : 'not', names));
  return out;
}

function behaviourFindings(op: (typeof OPERATIONS)[number], b: Behaviour, path: Path): Finding[] {
  const out: Finding[] = [];
  const noEffect = (at: Path, message: string) => out.push({ path: at, severity: 'warning', code: 'no-effect', message });
  if (op !== 'resolve') {
    if (b.resolves !== undefined) noEffect([...path, 'resolves'], `resolves does nothing in ${op}: it answers name enquiries (resolve) only`);
    if (b.name !== undefined) noEffect([...path, 'name'], `name does nothing in ${op}: it answers name enquiries (resolve) only`);
  } else if (b.callback || b.extra_callbacks) {
    noEffect([...path, b.callback ? 'callback' : 'extra_callbacks'], 'a name enquiry is answered at once: resolve never calls back');
  }
  if (op !== 'resolve' && (b.respond === 'reject' || b.respond === 'server_error') && (b.callback || b.extra_callbacks)) {
    noEffect(
      [...path, b.callback ? 'callback' : 'extra_callbacks'],
      `respond: ${b.respond} creates no transaction, so its callback is never sent (use timeout, malformed or reset for a late callback)`,
    );
  }
  if (b.http_status !== undefined && b.respond !== 'reject' && b.respond !== 'server_error') {
    noEffect([...path, 'http_status'], `http_status sets the status of a reject or server_error only, not of respond: ${b.respond}`);
  }
  for (const [at, callback] of [[[...path, 'callback'], b.callback] as const, ...(b.extra_callbacks ?? []).map((c, i) => [[...path, 'extra_callbacks', i], c] as const)]) {
    if (!callback) continue;
    if (callback.duplicate_after_seconds !== undefined && callback.duplicate !== true) {
      noEffect([...at, 'duplicate_after_seconds'], 'duplicate_after_seconds does nothing without duplicate: true');
    }
    if (callback.reason !== undefined && callback.status === 'success') noEffect([...at, 'reason'], 'reason explains a failed callback only; this one succeeds');
  }
  return out;
}

/** The same predicate, numbers compared in their normalised form. */
function samePredicate(field: string, a: Predicate, b: Predicate): boolean {
  const norm = (p: Predicate) =>
    field === 'msisdn'
      ? JSON.stringify({ ...p, equals: p.equals !== undefined ? (normaliseMsisdn(String(p.equals)) ?? p.equals) : undefined, one_of: p.one_of?.map((v) => normaliseMsisdn(String(v)) ?? v) })
      : JSON.stringify(p);
  return norm(a) === norm(b);
}

/** Does `earlier` match every call `later` matches? Sure only for plain field lists. */
function alwaysMatchesFirst(earlier: ScenarioRule, later: ScenarioRule): boolean {
  if (earlier.state?.requires !== undefined) return false;
  if (earlier.default === true) return true;
  const a = earlier.match;
  const b = later.match;
  if (!a || !b || a.all || a.any || a.not) return false;
  const fields = Object.entries(a).filter(([, p]) => p !== undefined) as [keyof MatchBlock, Predicate][];
  return fields.every(([field, p]) => {
    const q = b[field] as Predicate | undefined;
    return q !== undefined && samePredicate(field, p, q);
  });
}

function answersFirst(earlier: ScenarioRule, op: (typeof OPERATIONS)[number], provider: string): boolean {
  const byProvider = earlier[op] as Record<string, unknown> | undefined;
  if (!byProvider) return false;
  return byProvider.any !== undefined || (provider !== 'any' && byProvider[provider] !== undefined);
}

function shadowFindings(rules: readonly ScenarioRule[], j: number, locate: Locate): Finding[] {
  const later = rules[j]!;
  const pairs = speaksFor(later);
  for (let i = 0; i < j; i++) {
    const earlier = rules[i]!;
    if (!alwaysMatchesFirst(earlier, later)) continue;
    const covered = pairs.filter((s) => answersFirst(earlier, s.op, s.provider));
    if (!covered.length) continue;
    const by = `rule ${JSON.stringify(earlier.name)} (line ${locate(['rules', i]).line}) matches every call it matches, and comes first`;
    if (covered.length === pairs.length) {
      return [{ path: ['rules', j], severity: 'warning', code: 'shadowed', message: `never answers: ${by}` }];
    }
    return covered.map((s) => ({ path: ['rules', j, s.op, s.provider], severity: 'warning' as const, code: 'shadowed', message: `${s.op} ${s.provider} never answers: ${by}` }));
  }
  return [];
}

/** Pure: every problem in one parsed scenario file of the language `schema`, located through `locate`. */
export function lintScenario(schema: ScenarioSchema, scenario: ScenarioFile, file: string, locate: Locate): LintProblem[] {
  const providers = schema.providers.filter((p) => p !== 'any');
  const out: LintProblem[] = [];
  scenario.rules.forEach((rule, index) => {
    const findings: Finding[] = [];
    if (rule.match) findings.push(...matchFindings(rule, rule.match, ['rules', index, 'match'], 'all', providers));
    for (const op of OPERATIONS) {
      for (const [provider, sequence] of Object.entries(rule[op] ?? {})) {
        for (const [k, b] of (sequence ?? []).entries()) findings.push(...behaviourFindings(op, b, ['rules', index, op, provider, k]));
      }
    }
    if (rule.state && rule.state.requires === undefined && rule.state.sets === undefined) {
      findings.push({ path: ['rules', index, 'state'], severity: 'warning', code: 'no-effect', message: 'state without requires or sets does nothing' });
    }
    findings.push(...shadowFindings(scenario.rules, index, locate));
    for (const f of findings) {
      const { line, col } = locate(f.path);
      out.push({ file, line, column: col, severity: f.severity, code: f.code, message: `rule ${JSON.stringify(rule.name)}: ${f.message}`, rule: index });
    }
  });
  scenario.api.forEach((rule, index) => {
    for (const f of apiRuleFindings(rule, index)) {
      const { line, col } = locate(f.path);
      out.push({ file, line, column: col, severity: f.severity, code: f.code, message: `api rule ${JSON.stringify(rule.name)}: ${f.message}`, rule: null });
    }
  });
  scenario.wallets.forEach((wallet, i) => {
    if (normaliseMsisdn(wallet.msisdn)) return;
    const { line, col } = locate(['wallets', i, 'msisdn']);
    out.push({ file, line, column: col, severity: 'warning', code: 'no-effect', message: `wallet ${wallet.msisdn} is no Ghana mobile number: no charge or payout can reach it`, rule: null });
  });
  return out.sort((a, b) => a.line - b.line || a.column - b.column);
}

/** `file:line:column: severity: message [code]`, as compilers print. */
export function formatLintProblem(p: LintProblem): string {
  return `${p.file}:${p.line}:${p.column}: ${p.severity}: ${p.message} [${p.code}]`;
}
