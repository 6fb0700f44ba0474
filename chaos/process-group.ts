import { createServer } from 'node:net';

// The harnesses (chaos/, bench/) start railyard in a process group of its own: npm and tsx start
// child processes, and signalling only the parent would leave the real server holding the port.

/** Signals every process of a group; a group already gone is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A whole-number command-line option within bounds, or the usage error `fail` reports. */
export function wholeNumberOption(name: string, value: string | undefined, fallback: number, min: number, max: number, fail: (message: string) => never): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) fail(`--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** Asks the kernel for a free loopback port, then lets it go for the server to take. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}
