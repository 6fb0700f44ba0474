import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WireResponseRecord } from '../../src/mocks/engine/wire-response-log.ts';
import { UNDESCRIBED_PROVIDERS, WIRE_CALLBACK_SCHEMAS, WIRE_ERROR_SCHEMAS, WIRE_SCHEMAS, type WireSource } from '../fixtures/wire-schemas/index.ts';

// Checks what the mocks answered (RAILYARD_WIRE_RESPONSE_LOG) against the providers' published
// descriptions (test/fixtures/wire-schemas): the status, every required field and its type.

export interface WireViolation {
  endpoint: string;
  status: number;
  problem: string;
  source?: WireSource;
  body: string;
}

export interface WireCheckReport {
  /** Answers that matched their provider's description. */
  checked: number;
  violations: WireViolation[];
  /** Answers a scenario's fault made on purpose (a malformed body): not the upstream's wire. */
  faults: number;
  /** Answers of mocks whose upstream publishes no description, per endpoint: counted, not checked. */
  undescribed: Map<string, number>;
  /** Each endpoint checked, and how many of its answers. */
  endpoints: Map<string, number>;
}

const endpointOf = (r: Pick<WireResponseRecord, 'provider' | 'method' | 'route' | 'path' | 'kind'>) =>
  r.kind === 'callback' ? `${r.provider} callback (${r.method})` : `${r.provider} ${r.method} ${r.route ?? `(no operation) ${r.path}`}`;

/** The first problems zod found, as "path: message". */
function problems(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

/** One answer against its description: null when it matches, else what is wrong; 'undescribed' when there is none to check. */
export function checkWireResponse(record: WireResponseRecord): { problem: string; source?: WireSource } | null | 'undescribed' {
  const parse = (): { value: unknown } | undefined => {
    try {
      return { value: JSON.parse(record.body) };
    } catch {
      return undefined;
    }
  };
  if (record.kind === 'callback') {
    const described = WIRE_CALLBACK_SCHEMAS.filter((c) => c.provider === record.provider);
    if (described.length === 0) return 'undescribed';
    const parsed = parse();
    if (!parsed) return { problem: 'the callback body is not JSON' };
    const schema = described.find((c) => c.matches(parsed.value));
    if (!schema) return { problem: `a callback none of ${record.provider}'s documented callbacks (${described.map((c) => c.name).join(', ')}) matches` };
    const result = schema.body.safeParse(parsed.value);
    return result.success ? null : { problem: `${schema.name}: ${problems(result.error.issues)}`, source: schema.source };
  }
  if (record.status >= 400) {
    const errors = WIRE_ERROR_SCHEMAS.find((e) => e.provider === record.provider);
    if (!errors) return 'undescribed';
    const parsed = parse();
    if (!parsed) return { problem: 'the refusal is not JSON', source: errors.source };
    const body = errors.routes?.matches(record.route) ? errors.routes.body : errors.body;
    const result = body.safeParse(parsed.value);
    return result.success ? null : { problem: `refusal: ${problems(result.error.issues)}`, source: errors.source };
  }
  const described = WIRE_SCHEMAS.filter((s) => s.provider === record.provider);
  if (described.length === 0) return 'undescribed';
  const sameRoute = described.filter((s) => s.method === record.method && s.route === record.route);
  if (sameRoute.length === 0) return { problem: `no published description of ${record.method} ${record.route ?? record.path}: the mock serves an endpoint nobody checks` };
  const schema = sameRoute.find((s) => s.statuses.includes(record.status));
  if (!schema) return { problem: `status ${record.status} is not the documented ${sameRoute.flatMap((s) => s.statuses).join(' or ')}`, source: sameRoute[0]!.source };
  if (schema.body === 'empty') return record.body === '' ? null : { problem: 'the description gives no body, the mock sent one', source: schema.source };
  const parsed = parse();
  if (!parsed) return { problem: 'the body is not JSON', source: schema.source };
  const result = schema.body.safeParse(parsed.value);
  return result.success ? null : { problem: problems(result.error.issues), source: schema.source };
}

export function checkWireResponses(records: Iterable<WireResponseRecord>): WireCheckReport {
  const report: WireCheckReport = { checked: 0, violations: [], faults: 0, undescribed: new Map(), endpoints: new Map() };
  for (const record of records) {
    if (record.fault) {
      report.faults++;
      continue;
    }
    const endpoint = endpointOf(record);
    const verdict = checkWireResponse(record);
    if (verdict === 'undescribed') {
      report.undescribed.set(endpoint, (report.undescribed.get(endpoint) ?? 0) + 1);
      continue;
    }
    report.endpoints.set(`${endpoint} ${record.status}`, (report.endpoints.get(`${endpoint} ${record.status}`) ?? 0) + 1);
    if (verdict === null) report.checked++;
    else report.violations.push({ endpoint, status: record.status, ...verdict, body: record.body.slice(0, 400) });
  }
  return report;
}

/** Every answer written to a RAILYARD_WIRE_RESPONSE_LOG directory. */
export function readWireResponseLog(dir: string): WireResponseRecord[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) =>
      readFileSync(join(dir, f), 'utf8')
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as WireResponseRecord),
    );
}

/** The report in a few lines, violations first. */
export function describeWireCheck(report: WireCheckReport): string {
  const lines = [`mock answers and callbacks checked against the providers' descriptions: ${report.checked} match, ${report.violations.length} violations, ${report.faults} scenario faults skipped`];
  for (const v of report.violations.slice(0, 20))
    lines.push(`  ✗ ${v.endpoint} ${v.status}: ${v.problem}${v.source ? ` [${v.source.document} ${v.source.version}, ${v.source.part}]` : ''}\n      ${v.body}`);
  const undescribed = [...report.undescribed.values()].reduce((a, b) => a + b, 0);
  if (undescribed) lines.push(`  ${undescribed} answers of mocks with no published description (${UNDESCRIBED_PROVIDERS.join(', ')}) counted, not checked`);
  return lines.join('\n');
}
