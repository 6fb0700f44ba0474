import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { portAccepts } from '../support/port-accepts.ts';
import { processTree } from '../support/process-tree.ts';
import { ROOT } from '../support/run-cli.ts';
import { freePort } from '../support/serve-process.ts';

// `npm start &` then `kill $!`, as a CI job does: the signal goes to the process that npm start (or
// npx railyard serve) created, not to railyard itself. It must stop railyard through its graceful
// drain, free the port and leave no process behind. (npm start serves dist/: npm ci builds it.)

const tmp = mkdtempSync(join(tmpdir(), 'railyard-stop-signals-'));
/** Each launcher's process and what ran below it, so a failed test leaves nothing running. */
const started: { child: ChildProcess; tree: number[] }[] = [];
afterEach(() => {
  for (const { child, tree } of started.splice(0)) for (const pid of [...descendants(child.pid!), ...tree, child.pid!]) killQuietly(pid);
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** Every live process below `pid`. */
function descendants(pid: number): number[] {
  return processTree(pid).slice(1);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return state.slice(state.lastIndexOf(')') + 2, state.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
  } catch {
    return false;
  }
}

/** Polls `check` until it holds or `ms` pass; the bound is generous, nothing is timed. */
async function waitUntil(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return check();
}

const LAUNCHERS = [
  { name: 'npm start', command: 'npm', args: ['start'], env: {}, signals: ['SIGTERM', 'SIGINT'] },
  { name: 'npx railyard serve', command: 'npx', args: ['railyard', 'serve'], env: {}, signals: ['SIGTERM', 'SIGINT'] },
  // A script shell that stays between npm and railyard (sh, not the project's bash) dies of SIGTERM
  // without passing it on: railyard takes its parent's going away as the signal.
  { name: 'npx railyard serve, through sh', command: 'npx', args: ['railyard', 'serve'], env: { npm_config_script_shell: '/bin/sh' }, signals: ['SIGTERM'] },
] as const;

describe('stopping railyard through the process npm created', { timeout: 120_000 }, () => {
  for (const launcher of LAUNCHERS) {
    for (const signal of launcher.signals) {
      it(`${signal} to the pid of \`${launcher.name}\` drains railyard, frees the port and leaves no process`, async () => {
        const port = await freePort();
        const child = spawn(launcher.command, launcher.args, {
          cwd: ROOT,
          env: {
            ...process.env,
            PORT: String(port),
            HOST: '127.0.0.1',
            RAILYARD_DB: join(tmp, `${launcher.name}-${signal}.db`),
            RAILYARD_LOG_REQUESTS: 'false',
            npm_config_update_notifier: 'false',
            NODE_NO_WARNINGS: '1',
            ...launcher.env,
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        const launched = { child, tree: [] as number[] };
        started.push(launched);
        let output = '';
        child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
        child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
        const exited = new Promise<void>((done) => child.once('exit', () => done()));

        expect(await waitUntil(() => healthy(port), 60_000), output).toBe(true);
        const tree = descendants(child.pid!);
        launched.tree = tree;
        expect(tree.length).toBeGreaterThan(0);

        process.kill(child.pid!, signal);

        expect(await waitUntil(async () => !(await portAccepts(port)), 20_000), `port ${port} still open:\n${output}`).toBe(true);
        expect(await waitUntil(() => tree.every((pid) => !alive(pid)), 20_000), `still running: ${tree.filter(alive).join(', ')}\n${output}`).toBe(true);
        await exited;
        expect(output).toContain(`received ${signal}: finishing in-flight requests`);
        expect(output).toContain('railyard stopped');
      });
    }
  }
});
