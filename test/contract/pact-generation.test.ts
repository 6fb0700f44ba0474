import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateContracts, type GeneratedPact } from '../../src/contracts/contract-generator.ts';
import { compareFolders } from '../../src/cli/contracts-command.ts';

// Generation replays every scripted scenario in scenarios/; these tests read what it wrote.

interface Interaction {
  type: string;
  description: string;
  providerStates?: { name: string; params?: Record<string, unknown> }[];
  request?: { path: string; headers?: Record<string, string[]>; generators?: unknown };
  response?: { status: number; matchingRules?: { body?: Record<string, unknown> } };
  contents?: { content: unknown };
  matchingRules?: { body?: Record<string, unknown> };
}
interface Pact {
  consumer: { name: string };
  provider: { name: string };
  interactions: Interaction[];
  metadata: { pactSpecification: { version: string } };
}

const tmp = mkdtempSync(join(tmpdir(), 'railyard-pact-gen-'));
const first = join(tmp, 'first');
const second = join(tmp, 'second');
let generated: GeneratedPact[] = [];
const read = (dir: string, file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Pact;

beforeAll(async () => {
  generated = await generateContracts({ dir: first });
  // Pact merges into existing files: a stale file and a stale interaction must not survive.
  cpSync(first, second, { recursive: true });
  writeFileSync(join(second, 'merchant-old-provider.json'), '{}');
  await generateContracts({ dir: second });
}, 120_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('railyard contracts generate', () => {
  it('is deterministic: a second generation over the first is byte-identical', () => {
    const files = readdirSync(first).sort();
    expect(readdirSync(second).sort()).toEqual(files);
    for (const f of files) expect(readFileSync(join(second, f), 'utf8'), f).toBe(readFileSync(join(first, f), 'utf8'));
  });

  it('matches the committed contracts/ (no drift)', () => {
    expect(compareFolders(first, 'contracts')).toEqual([]);
  });

  it('writes both families: merchant -> railyard, and railyard -> each upstream provider', () => {
    expect(generated.map((g) => `${g.consumer}-${g.provider}`).sort()).toEqual([
      'merchant-railyard',
      'railyard-bank-rail',
      'railyard-bills',
      'railyard-card-processor',
      'railyard-direct-debit',
      'railyard-hubtel',
      'railyard-mtn-momo',
      'railyard-paystack',
    ]);
    for (const g of generated) expect(g.http, g.file).toBeGreaterThan(0);
    for (const file of readdirSync(first)) expect(read(first, file).metadata.pactSpecification.version).toBe('4.0');
  });

  it('makes each scripted request an HTTP interaction and each webhook it causes a message', () => {
    const pact = read(first, 'merchant-railyard.json');
    const http = pact.interactions.filter((i) => i.type === 'Synchronous/HTTP');
    const messages = pact.interactions.filter((i) => i.type === 'Asynchronous/Messages');
    expect(http.length).toBe(generated.find((g) => g.provider === 'railyard')!.http);
    expect(messages.map((m) => m.description)).toContain('failover step 2: the charge.success webhook');
    const success = messages.find((m) => m.description === 'failover step 2: the charge.success webhook')!;
    expect(success.contents!.content).toMatchObject({ type: 'charge.success', data: { object: { object: 'charge', status: 'success', provider: 'hubtel' } } });
  });

  it('names provider states after the scenario and its step, with the parameters to rebuild them', () => {
    const pact = read(first, 'merchant-railyard.json');
    const get = pact.interactions.find((i) => i.description === 'failover step 3: the charge is settled by hubtel')!;
    expect(get.providerStates).toEqual([
      { name: 'failover (A timeout at mtn-momo, then success on hubtel), after step 2: hubtel calls back', params: { after_step: 2, scenario: 'scenarios/failover.yaml', seed: 1 } },
    ]);
    const upstream = read(first, 'railyard-hubtel.json').interactions[0]!;
    expect(upstream.providerStates![0]!.params).toMatchObject({ scenario: expect.stringMatching(/^scenarios\//), step: expect.any(Number), call: expect.any(Number) });
  });

  it('embeds the text of each scenario its states name, so a file verifies from any directory, alone', () => {
    for (const file of readdirSync(first)) {
      const pact = read(first, file) as Pact & { metadata: { railyard: { scenarios: Record<string, string> } } };
      const named = new Set(pact.interactions.flatMap((i) => (i.providerStates ?? []).map((s) => s.params!.scenario as string)));
      expect(Object.keys(pact.metadata.railyard.scenarios).sort(), file).toEqual([...named].sort());
      for (const name of named) expect(pact.metadata.railyard.scenarios[name], name).toBe(readFileSync(name, 'utf8'));
    }
  });

  it('says what a consumer relies on: ids by pattern, asserted values exactly, script references from the provider state', () => {
    const pact = read(first, 'merchant-railyard.json');
    const create = pact.interactions.find((i) => i.description === 'failover step 1: charge 100.00 GHS from 0241110001')!;
    const rules = create.response!.matchingRules!.body!;
    expect(rules['$.data.id']).toEqual({ combine: 'AND', matchers: [{ match: 'regex', regex: '^chg_[0-9a-z]+$' }] });
    expect(rules['$.data.created_at']).toMatchObject({ matchers: [{ match: 'datetime' }] });
    // provider: hubtel is asserted by the script, so it is exact: no rule.
    expect(rules['$.data.provider']).toBeUndefined();
    expect(create.request!.headers!['Idempotency-Key']).toBeDefined();
    const get = pact.interactions.find((i) => i.description === 'failover step 3: the charge is settled by hubtel')!;
    expect(get.request!.generators).toEqual({ path: { expression: '/api/v1/charges/${charge_body_data_id}', type: 'ProviderState' } });
  });

  it('carries no secret and no port of its own run', () => {
    for (const file of readdirSync(first)) {
      const text = readFileSync(join(first, file), 'utf8');
      expect(text, file).not.toMatch(/sk_test_|sig_test_|whsec_|cbt_[0-9a-f]{8}/);
      expect(text, file).not.toMatch(/127\.0\.0\.1:(?!4010)\d+/);
    }
    const mtn = read(first, 'railyard-mtn-momo.json');
    const auth = mtn.interactions.flatMap((i) => i.request?.headers?.authorization ?? []);
    expect(auth.length).toBeGreaterThan(0);
    for (const value of auth) expect(value).toMatch(/^(Basic|Bearer) redacted-in-contracts$/);
  });
});

describe('drift: comparing a folder with a fresh generation', () => {
  it('names the file and the first line that differs', () => {
    const tampered = join(tmp, 'tampered');
    cpSync(first, tampered, { recursive: true });
    const file = join(tampered, 'railyard-hubtel.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace('"status": 200', '"status": 201'));
    rmSync(join(tampered, 'railyard-bank-rail.json'));
    const problems = compareFolders(first, tampered);
    expect(problems).toHaveLength(2);
    expect(problems.find((p) => p.includes('railyard-bank-rail.json'))).toMatch(/is missing/);
    expect(problems.find((p) => p.includes('railyard-hubtel.json'))).toMatch(/differs at line \d+:\n\s+committed: "status": 201,?\n\s+generated: "status": 200/);
  });
});
