import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { portAccepts } from '../support/port-accepts.ts';
import { installPackedRailyard, pipelineEnv, ROOT, run } from '../support/packed-project.ts';
import { freePort } from '../support/serve-process.ts';

// The GitHub Actions and GitLab CI jobs of docs/ci.md, run step by step as their runners would,
// in a merchant's project with the packed railyard installed: start `npx railyard serve` in the
// background, wait for its health, replay, verify the contract against it, stop it.

const doc = readFileSync(resolve(ROOT, 'docs/ci.md'), 'utf8');
const recipe = (name: string) => {
  const section = doc.slice(doc.indexOf(`<!-- ci-recipe:${name}:start -->`), doc.indexOf(`<!-- ci-recipe:${name}:end -->`));
  return parse(/```yaml\n([\s\S]*?)```/.exec(section)![1]!) as Record<string, any>;
};

interface GithubStep {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
}

const tmp = mkdtempSync(join(tmpdir(), 'railyard-ci-recipes-'));
let project = '';
beforeAll(() => {
  project = installPackedRailyard(tmp);
}, 320_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** What the reports hold: the JUnit counts of each. */
function junitTotals(file: string): { tests: number; failures: number } {
  const xml = readFileSync(file, 'utf8');
  const head = /<testsuites[^>]*>/.exec(xml)![0];
  return { tests: Number(/tests="(\d+)"/.exec(head)![1]), failures: Number(/failures="(\d+)"/.exec(head)![1]) };
}

/** Waits (15 s at most) until nothing listens on the port: a stopped railyard drains first. */
async function freed(port: number): Promise<boolean> {
  for (let i = 0; i < 75; i++) {
    if (!(await portAccepts(port))) return true;
    await new Promise((done) => setTimeout(done, 200));
  }
  return false;
}

function expectReports(): void {
  expect(junitTotals(join(project, 'reports/replay.xml'))).toMatchObject({ failures: 0 });
  expect(junitTotals(join(project, 'reports/replay.xml')).tests).toBeGreaterThan(10);
  const contracts = junitTotals(join(project, 'reports/contracts.xml'));
  expect(contracts.failures).toBe(0);
  expect(contracts.tests).toBeGreaterThan(100);
}

describe('the GitHub Actions job in docs/ci.md', { timeout: 400_000 }, () => {
  it('runs every step to success against the packed package, and the last one stops railyard', async () => {
    const job = recipe('github').jobs.railyard as { env: Record<string, string | number>; steps: GithubStep[] };
    // The two actions give a checkout (the project) and Node 24 (pipelineEnv puts it first on PATH).
    expect(job.steps.filter((s) => s.uses).map((s) => s.uses)).toEqual(['actions/checkout@v4', 'actions/setup-node@v4']);
    const port = await freePort();
    const env = pipelineEnv({ ...Object.fromEntries(Object.entries(job.env).map(([k, v]) => [k, String(v)])), PORT: String(port) });
    let failed = false;
    for (const step of job.steps.filter((s) => s.run)) {
      if (failed && step.if !== 'always()') continue;
      // GitHub's shell for run: bash --noprofile --norc -eo pipefail
      const result = run('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run!], project, env);
      expect.soft(result.code, `${step.name}:\n${result.output}`).toBe(0);
      if (result.code !== 0) failed = true;
    }
    expect(failed).toBe(false);
    expectReports();
    expect(await freed(port)).toBe(true);
  });
});

describe('the GitLab CI job in docs/ci.md', { timeout: 400_000 }, () => {
  it('runs its script to success in one shell and its after_script stops railyard', async () => {
    const job = recipe('gitlab').railyard as { image: string; variables: Record<string, string>; script: string[]; after_script: string[] };
    expect(job.image).toBe('node:24');
    rmSync(join(project, 'reports'), { recursive: true, force: true });
    const port = await freePort();
    const env = pipelineEnv({ ...job.variables, PORT: String(port) });
    const script = run('bash', ['-eo', 'pipefail', '-c', job.script.join('\n')], project, env);
    const after = run('bash', ['-eo', 'pipefail', '-c', job.after_script.join('\n')], project, env);
    expect(script.code, script.output).toBe(0);
    expect(after.code, after.output).toBe(0);
    expect(existsSync(join(project, 'node_modules/railyard/dist/main.js'))).toBe(true);
    expectReports();
    expect(await freed(port)).toBe(true);
  });
});
