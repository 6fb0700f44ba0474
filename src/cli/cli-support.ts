import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** The configured scenario paths, as serve reads them: the default folder may be absent. */
export function configuredScenarioPaths(paths: readonly string[]): string[] {
  return paths.filter((p) => existsSync(resolve(p)) || p !== 'scenarios');
}

/** An AbortSignal that SIGINT, SIGTERM or the optional deadline (seconds) aborts. */
export function stopSignal(afterSeconds?: number): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (afterSeconds !== undefined) setTimeout(stop, afterSeconds * 1000).unref();
  return controller.signal;
}

/** A usage error: the complaint and the usage text on stderr; exit code 2. */
export function usageError(command: string, problem: string, usage: string): number {
  process.stderr.write(`railyard ${command}: ${problem}\n\n${usage}`);
  return 2;
}

/**
 * A subcommand's arguments parsed strictly; parseArgs' complaints (unknown or malformed options)
 * are usage errors, written with the usage text: then undefined, and the command exits 2.
 */
export function parseCommandArgs<T extends ParseArgsConfig>(command: string, usage: string, config: T): ReturnType<typeof parseArgs<T>> | undefined {
  try {
    return parseArgs(config);
  } catch (err) {
    usageError(command, err instanceof Error ? err.message : String(err), usage);
    return undefined;
  }
}

export function isPort(text: string): boolean {
  return /^\d{1,5}$/.test(text) && Number(text) <= 65_535;
}

export function isHttpUrl(text: string): boolean {
  return /^https?:\/\/[^/]+/.test(text) && URL.canParse(text);
}
