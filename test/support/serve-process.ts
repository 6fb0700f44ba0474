import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ROOT } from './run-cli.ts';

/** `railyard serve` as a real process: what a merchant's container runs. */
export interface ServeProcess {
  baseUrl: string;
  port: number;
  output(): string;
  /** Sends the signal and waits for the process to exit. */
  stop(signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

/** Resolves once a `railyard serve` child has printed its banner (it listens then); fails if it exits first. */
export function untilServing(child: ChildProcess): Promise<void> {
  return new Promise<void>((done, fail) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('openapi')) done();
    });
    child.once('exit', (code) => fail(new Error(`serve exited ${code}: ${out}`)));
  });
}

/** Starts `railyard serve` and resolves once it has printed its banner (it listens then). */
export function startServe(env: Record<string, string>, port: number, timeoutMs = 30_000): Promise<ServeProcess> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, NODE_NO_WARNINGS: '1', RAILYARD_LOG_REQUESTS: 'false', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const proc: ServeProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    output: () => out,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`railyard serve did not start within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const check = () => {
      if (out.includes('openapi')) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        done(proc);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`railyard serve exited with ${code} before listening:\n${out}`));
    });
  });
}
