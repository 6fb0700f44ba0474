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
