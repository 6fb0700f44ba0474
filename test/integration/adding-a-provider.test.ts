import { execFile } from 'node:child_process';
import { cpSync, type Dirent, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// docs/providers.md#adding-a-provider, done to a copy of railyard: one folder (a throwaway
// provider, test/fixtures/provider-acme/) and one line, its entry in the list of
// src/providers/index.ts (and that entry's import). Then everything that lists providers must
// list it, with nothing else edited.

const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
let copy: string;

/** Adds `line` after the last line of `file` (in the copy) that matches `after`. */
function addLine(file: string, after: RegExp, line: string): void {
  const path = join(copy, file);
  const lines = readFileSync(path, 'utf8').split('\n');
  const at = lines.findLastIndex((l) => after.test(l));
  if (at < 0) throw new Error(`${file}: no line matches ${after}`);
  lines.splice(at + 1, 0, line);
  writeFileSync(path, lines.join('\n'));
}

const PROBE = `
import { UPSTREAM_PROVIDERS } from './src/contracts/contract-generator.ts';
import { registration } from './src/provider-registry.ts';
import { buildConfig } from './src/railyard-config.ts';
import { parseRule, parseScenario, SCENARIO_PROVIDERS, scenarioJsonSchema } from './src/railyard-scenarios.ts';
import { mockContractCases, railContractCases } from './test/support/provider-contract-cases.ts';
const refused = (f: () => unknown) => { try { f(); return false; } catch { return true; } };
const config = buildConfig({ providers: { acme: { api_key: 'acme_live_key' } } });
console.log(JSON.stringify({
  block: config.providers.acme,
  defaults: buildConfig().providers.acme,
  strict: refused(() => buildConfig({ providers: { acme: { no_such_field: 1 } } })),
  scenarioProviders: SCENARIO_PROVIDERS,
  rule: parseRule({ name: 'acme declines', match: { msisdn: '0240000001' }, collect: { acme: { respond: 'reject', reason: 'declined' } } }).collect,
  file: parseScenario(['version: 1', 'name: acme', 'rules:', '  - name: acme times out', '    default: true', '    payout:', '      acme: { respond: timeout }'].join(String.fromCharCode(10)), 'acme.yaml').rules[0]?.payout,
  unknown: refused(() => parseRule({ name: 'nobody', default: true, collect: { acme2: { respond: 'accept' } } } as never)),
  jsonSchema: Object.keys((scenarioJsonSchema() as any).$defs.per_provider.properties),
  upstreams: UPSTREAM_PROVIDERS,
  adapter: registration('acme').adapter(config, { selfBaseUrl: () => 'http://127.0.0.1:4010', uuid: () => 'u', timeoutMs: 100, clock: { now: () => 0 } as never }).baseUrl(),
  railContract: railContractCases().map((c) => c.name),
  mockContract: mockContractCases().map((c) => c.name),
}));
`;

beforeAll(async () => {
  copy = mkdtempSync(join(tmpdir(), 'railyard-acme-'));
  for (const part of ['src', 'test/support', 'package.json', 'tsconfig.json']) cpSync(join(ROOT, part), join(copy, part), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
  // The documented way: the folder, then its line in the list (and the import that line names).
  cpSync(join(ROOT, 'test/fixtures/provider-acme'), join(copy, 'src/providers/acme'), { recursive: true });
  addLine('src/providers/index.ts', /^import /, "import { acme } from './acme/index.ts';");
  addLine('src/providers/index.ts', /^  bills,$/, '  acme,');
  writeFileSync(join(copy, 'probe.ts'), PROBE);
}, 60_000);

afterAll(() => {
  if (copy) rmSync(copy, { recursive: true, force: true });
});

describe('adding a provider: one folder and its line in the list of src/providers/index.ts', () => {
  it('changes nothing else: the copy of src/ differs by the folder and the line (with its import) in the list', () => {
    const files = (dir: string) => (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[]).filter((f) => f.isFile()).map((f) => relative(dir, join(f.parentPath, f.name)));
    const before = new Set(files(join(ROOT, 'src')));
    const after = files(join(copy, 'src'));
    expect(after.filter((f) => !before.has(f)).every((f) => f.startsWith('providers/acme/'))).toBe(true);
    expect([...before].filter((f) => !after.includes(f))).toEqual([]);
    const edited = [...before].filter((f) => readFileSync(join(ROOT, 'src', f), 'utf8') !== readFileSync(join(copy, 'src', f), 'utf8'));
    expect(edited).toEqual(['providers/index.ts']);
    const lines = new Set(readFileSync(join(ROOT, 'src/providers/index.ts'), 'utf8').split('\n'));
    expect(
      readFileSync(join(copy, 'src/providers/index.ts'), 'utf8')
        .split('\n')
        .filter((l) => !lines.has(l)),
    ).toEqual(["import { acme } from './acme/index.ts';", '  acme,']);
  });

  it('type-checks: the folder and its line are all the compiler asks for', async () => {
    writeFileSync(join(copy, 'tsconfig.check.json'), JSON.stringify({ extends: './tsconfig.json', include: ['src', 'probe.ts', 'test/support/provider-contract-cases.ts'], exclude: [] }));
    await expect(run('npx', ['tsc', '--noEmit', '-p', 'tsconfig.check.json'], { cwd: copy })).resolves.toBeDefined();
  }, 120_000);

  it('is in the configuration schema, the scenario language (and its JSON Schema), the contract generator and both contract suites', async () => {
    const { stdout } = await run('npx', ['tsx', 'probe.ts'], { cwd: copy });
    const found = JSON.parse(stdout);
    expect(found.block).toEqual({ enabled: true, priority: 5, api_key: 'acme_live_key' });
    expect(found.defaults).toEqual({ enabled: true, priority: 5, api_key: 'acme_test_key' });
    expect(found.strict).toBe(true);
    expect(found.scenarioProviders).toEqual(['mtn-momo', 'hubtel', 'bank-rail', 'paystack', 'card-processor', 'direct-debit', 'bills', 'acme', 'any']);
    expect(found.rule).toEqual({ acme: [expect.objectContaining({ respond: 'reject', reason: 'declined' })] });
    expect(found.file).toEqual({ acme: [expect.objectContaining({ respond: 'timeout' })] });
    expect(found.unknown).toBe(true);
    expect(found.jsonSchema).toEqual(['mtn-momo', 'hubtel', 'bank-rail', 'paystack', 'card-processor', 'direct-debit', 'bills', 'acme', 'any']);
    expect(found.upstreams).toContain('acme');
    expect(found.adapter).toBe('http://127.0.0.1:4010/mocks/acme');
    expect(found.railContract).toContain('acme');
    expect(found.mockContract).toContain('acme');
  }, 60_000);

  it('is in railyard help, with what it speaks', async () => {
    const { stdout } = await run('npx', ['tsx', 'src/main.ts', 'help'], { cwd: copy });
    expect(stdout).toMatch(/^ {2}acme +Acme Pay: a made-up upstream, added the documented way$/m);
  }, 60_000);
});
