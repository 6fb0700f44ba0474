// `railyard scenarios lint` for a file's `api:` section: a fault rule that can never fire, or a
// field that changes nothing. Pure, like the provider rules' lint beside it.

import type { ApiMatchBlock, ApiRule, Predicate } from './scenario-schema.ts';

type Path = (string | number)[];

export interface ApiFinding {
  path: Path;
  severity: 'error' | 'warning';
  code: 'unmatchable' | 'no-effect';
  message: string;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

function named(p: Predicate): (string | number)[] {
  if (p.equals !== undefined) return [p.equals];
  return p.one_of ?? [];
}

function matchFindings(match: ApiMatchBlock, path: Path, inAll: boolean): ApiFinding[] {
  const out: ApiFinding[] = [];
  const never = (at: Path, what: string): ApiFinding =>
    inAll
      ? { path: at, severity: 'error', code: 'unmatchable', message: `${what}, so the rule never fires` }
      : { path: at, severity: 'warning', code: 'no-effect', message: `${what}, so this branch holds for no request` };
  for (const value of match.method ? named(match.method) : []) {
    const text = String(value);
    if (!METHODS.has(text))
      out.push(
        never([...path, 'method'], METHODS.has(text.toUpperCase()) ? `method ${text} is compared in upper case: write ${text.toUpperCase()}` : `method ${text} is no HTTP method railyard serves`),
      );
  }
  for (const value of match.route ? named(match.route) : []) {
    const text = String(value);
    const method = /^([A-Za-z]+)\s+(\/.*)$/.exec(text);
    if (method) out.push(never([...path, 'route'], `route ${text} names a method: write method: ${method[1]!.toUpperCase()} and route: ${method[2]}`));
    else if (!text.startsWith('/')) out.push(never([...path, 'route'], `route ${text} does not start with /`));
    else if (text.startsWith('/api/v1/sandbox/')) out.push(never([...path, 'route'], `route ${text} is a sandbox control, which faults never touch (so the sandbox can always switch them off)`));
  }
  for (const value of match.key ? named(match.key) : []) {
    const text = String(value);
    if (text.startsWith('sk_')) out.push(never([...path, 'key'], 'key names a key by its id (key_..., as GET /api/v1/keys lists it), never by the secret key itself'));
  }
  for (const [i, block] of (match.all ?? []).entries()) out.push(...matchFindings(block, [...path, 'all', i], inAll));
  for (const [i, block] of (match.any ?? []).entries()) out.push(...matchFindings(block, [...path, 'any', i], false));
  if (match.not) out.push(...matchFindings(match.not, [...path, 'not'], false));
  return out;
}

export function apiRuleFindings(rule: ApiRule, index: number): ApiFinding[] {
  const at = (...rest: Path): Path => ['api', index, ...rest];
  const out: ApiFinding[] = rule.match ? matchFindings(rule.match, at('match'), true) : [];
  if (rule.rate_limit) {
    for (const field of ['every', 'probability', 'times'] as const) {
      if (rule[field] !== undefined) out.push({ path: at(field), severity: 'warning', code: 'no-effect', message: `${field} does nothing on a rate_limit: the window decides` });
    }
  }
  if (rule.probability === 0) out.push({ path: at('probability'), severity: 'warning', code: 'no-effect', message: 'probability 0 never fires' });
  const noCommit = rule.drop === 'before_commit' || rule.respond?.before_commit === true;
  if (noCommit && rule.latency_ms?.after_commit !== undefined) {
    out.push({ path: at('latency_ms', 'after_commit'), severity: 'warning', code: 'no-effect', message: 'after_commit latency on a rule that answers before any work: nothing commits' });
  }
  if (rule.state && rule.state.requires === undefined && rule.state.sets === undefined) {
    out.push({ path: at('state'), severity: 'warning', code: 'no-effect', message: 'state without requires or sets does nothing' });
  }
  return out;
}
