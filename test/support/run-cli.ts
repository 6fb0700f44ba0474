import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(import.meta.dirname, '../..');

/** tsx's loader and the CLI by absolute location, so the CLI runs from any working directory. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const MAIN = resolve(ROOT, 'src/main.ts');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `railyard <args…>` as a real process, from the repository root unless `cwd` says otherwise. */
export function runCli(args: readonly string[], timeoutMs = 60_000, options: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...(options.env ?? { NODE_NO_WARNINGS: '1' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
