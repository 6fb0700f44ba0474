import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import type { z } from 'zod';

/** A problem in a YAML file, located as file:line:column. */
export class YamlSourceError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'YamlSourceError';
  }
}

interface Located {
  data: unknown;
  /**
   * Position of the value at `path`, or of its key when `atKey` (unknown fields). `skipped`
   * lists path positions that are no node in the file: a schema may wrap a single value into a
   * one-item list, whose index 0 the file never wrote.
   */
  locate(path: readonly PropertyKey[], atKey?: boolean): { line: number; col: number; skipped: Set<number> };
}

/** Parses YAML, keeping positions so a schema error can point at its line and column. */
export function parseYamlSource(text: string, file: string): Located {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length) {
    throw new YamlSourceError(
      doc.errors.map((e) => {
        const pos = lineCounter.linePos(e.pos[0]);
        return `${file}:${pos.line}:${pos.col}: ${e.message.split('\n')[0]}`;
      }),
    );
  }
  const locate = (path: readonly PropertyKey[], atKey = false) => {
    let node: unknown = doc.contents;
    let best = node as Node | null;
    const skipped = new Set<number>();
    for (const [i, key] of path.entries()) {
      if (typeof key === 'number' && !isSeq(node) && key === 0) {
        skipped.add(i);
        continue;
      }
      if (isMap(node)) {
        const pair = node.items.find((p) => String((p.key as { value?: unknown })?.value ?? p.key) === String(key));
        if (!pair) break;
        const last = i === path.length - 1;
        node = pair.value ?? pair.key;
        best = ((last && atKey) || !pair.value ? pair.key : pair.value) as Node;
      } else if (isSeq(node) && typeof key === 'number') {
        node = node.items[key];
        if (!node) break;
        best = node as Node;
      } else break;
    }
    const offset = best?.range?.[0] ?? 0;
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, col: pos.col, skipped };
  };
  return { data: doc.toJS(), locate };
}

/** Validates YAML text against a schema; every issue is reported with its file:line:column. */
export function parseYamlWith<T>(schema: z.ZodType<T>, text: string, file: string): T {
  const source = parseYamlSource(text, file);
  const result = schema.safeParse(source.data ?? {});
  if (result.success) return result.data;
  throw new YamlSourceError(
    result.error.issues.map((issue) => {
      const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
      const { line, col, skipped } = source.locate(path, issue.code === 'unrecognized_keys');
      const shown = path.filter((_, i) => !skipped.has(i));
      const where = shown.length ? shown.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)';
      const what = issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : issue.message;
      return `${file}:${line}:${col}: ${where}: ${what}`;
    }),
  );
}
