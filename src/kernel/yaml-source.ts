import { isMap, isScalar, isSeq, LineCounter, parseDocument, Scalar, type Node } from 'yaml';
import type { z } from 'zod';

/** A problem in a YAML file, located as file:line:column. */
export class YamlSourceError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('\n'));
    this.name = 'YamlSourceError';
  }
}

export interface Located {
  data: unknown;
  /**
   * Position of the value at `path`, or of its key when `atKey` (unknown fields). `skipped`
   * lists path positions that are no node in the file: a schema may wrap a single value into a
   * one-item list, whose index 0 the file never wrote.
   */
  locate(path: readonly PropertyKey[], atKey?: boolean): { line: number; col: number; skipped: Set<number> };
  /** Every scalar value in the file, with its path and how it was written. */
  scalars(): ScalarNode[];
}

/** A scalar as the file wrote it: a checker can tell `0249990004` from `"0249990004"`. */
export interface ScalarNode {
  path: (string | number)[];
  /** The value YAML read (`0249990004` is the number 249990004). */
  value: unknown;
  /** The text as written in the file, quotes included. */
  source: string;
  quoted: boolean;
  line: number;
  col: number;
}

/** A problem a checker found at a path of the file; parseYamlWith locates and reports it. */
export interface SourceProblem {
  path: (string | number)[];
  message: string;
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
  const scalars = (): ScalarNode[] => {
    const out: ScalarNode[] = [];
    const walk = (node: unknown, path: (string | number)[]) => {
      if (isMap(node)) {
        for (const pair of node.items) walk(pair.value, [...path, String((pair.key as { value?: unknown })?.value ?? pair.key)]);
      } else if (isSeq(node)) {
        for (const [i, item] of node.items.entries()) walk(item, [...path, i]);
      } else if (isScalar(node) && node.range) {
        const pos = lineCounter.linePos(node.range[0]);
        const quoted = node.type === Scalar.QUOTE_DOUBLE || node.type === Scalar.QUOTE_SINGLE;
        out.push({ path, value: node.value, source: text.slice(node.range[0], node.range[1]), quoted, line: pos.line, col: pos.col });
      }
    };
    walk(doc.contents, []);
    return out;
  };
  return { data: doc.toJS(), locate, scalars };
}

/** A path as problems name it: `rules[0].match.msisdn`. */
export function pathText(path: readonly PropertyKey[]): string {
  return path.length
    ? path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
        .join('')
        .replace(/^\./, '')
    : '(root)';
}

function samePrefix(prefix: readonly PropertyKey[], path: readonly PropertyKey[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => String(p) === String(path[i]));
}

/**
 * Validates YAML text against a schema; every issue is reported with its file:line:column.
 * `check` looks at the file as written (scalar types, quoting) for what the data alone cannot
 * show; its problems replace the schema's issues at or under the same path.
 */
export function parseYamlWith<T>(schema: z.ZodType<T>, text: string, file: string, check?: (source: Located) => SourceProblem[]): T {
  const source = parseYamlSource(text, file);
  const found = check?.(source) ?? [];
  const result = schema.safeParse(source.data ?? {});
  if (result.success && !found.length) return result.data;
  const issues = result.success ? [] : result.error.issues.filter((issue) => !found.some((p) => samePrefix(p.path, issue.path)));
  throw new YamlSourceError([
    ...found.map((p) => {
      const { line, col } = source.locate(p.path);
      return `${file}:${line}:${col}: ${p.message}`;
    }),
    ...issues.map((issue) => {
      const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
      const { line, col, skipped } = source.locate(path, issue.code === 'unrecognized_keys');
      const shown = path.filter((_, i) => !skipped.has(i));
      const where = pathText(shown);
      const what = issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` : issue.message;
      return `${file}:${line}:${col}: ${where}: ${what}`;
    }),
  ]);
}
