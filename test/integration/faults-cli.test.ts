import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runFaults } from '../../src/cli/faults-command.ts';
import { startTestSandbox, type TestSandbox } from '../support/test-sandbox.ts';

// `railyard faults on|list|off` against a running sandbox: the CLI of /api/v1/sandbox/faults.

let sb: TestSandbox;
beforeEach(async () => {
  sb = await startTestSandbox();
});
afterEach(() => sb.close());

async function faults(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runFaults([...args, '--api', sb.baseUrl, '--key', sb.key], { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => err.push(t) } }, {});
  return { code, stdout: out.join(''), stderr: err.join('') };
}

describe('railyard faults', () => {
  it('on lost-responses for one route with a probability, list, off', async () => {
    const on = await faults('on', 'lost-responses', '--route', 'POST /api/v1/transfers', '--probability', '0.2');
    expect(on).toMatchObject({ code: 0, stderr: '' });
    expect(on.stdout).toBe('on: flt_1         drop        lost-responses on POST /api/v1/transfers  (matched 0, fired 0)\n');
    expect(sb.ry.apiFaults.list()[0]!.rule).toMatchObject({ probability: 0.2, drop: 'after_commit', match: { method: { equals: 'POST' }, route: { equals: '/api/v1/transfers' } } });

    await faults('on', 'rate-limit', '--requests', '3', '--per-seconds', '10');
    expect((await faults('list')).stdout).toBe(
      ['flt_1         drop        lost-responses on POST /api/v1/transfers  (matched 0, fired 0)', 'flt_2         rate_limit  rate-limit  (matched 0, fired 0)', ''].join('\n'),
    );
    expect(await faults('off', 'flt_2')).toMatchObject({ code: 0, stdout: 'off: 1 fault(s) switched off\n' });
    expect(await faults('off')).toMatchObject({ code: 0, stdout: 'off: 1 fault(s) switched off\n' });
    expect((await faults('list')).stdout).toBe('no faults in force\n');
  });

  it('server errors after the commit, slow responses: the options reach the rule', async () => {
    await faults('on', 'server-errors', '--after-commit', '--times', '2');
    await faults('on', 'slow-responses', '--latency-ms', '500', '--every', '3');
    expect(sb.ry.apiFaults.list().map((f) => f.rule)).toMatchObject([
      { default: true, respond: { status: 500, before_commit: false }, times: 2 },
      { default: true, latency_ms: { before_commit: 500 }, every: 3 },
    ]);
  });

  it('exit 2 on bad arguments, 1 when the API refuses', async () => {
    expect((await faults('on', 'lost-responses', '--probability', 'often')).code).toBe(2);
    expect((await faults('sideways')).code).toBe(2);
    const refused = await faults('on', 'earthquake');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the API refused: 400 validation_error profile: /);
    expect((await faults('off', 'flt_42')).stderr).toMatch(/404 not_found/);
  });
});
