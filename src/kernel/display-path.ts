import { isAbsolute, relative } from 'node:path';

/**
 * A file as railyard shows it everywhere (start-up banner, load errors, the sandbox API, the
 * inspector, the dashboard, CLI reports): relative to the working directory when inside it,
 * otherwise absolute, never `../..`. Any path the API shows can be given back to it.
 */
export function displayPath(path: string, cwd = process.cwd()): string {
  if (!isAbsolute(path)) return path;
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
