// Partial matching for replay expectations, and `${name.path}` references to saved responses.

/** Where an expectation and the actual value part ways. */
export interface Mismatch {
  /** Dotted path from the compared root, e.g. `body.data.status` or `items[1].id`; '' is the root. */
  path: string;
  expected: unknown;
  actual: unknown;
  /** What differs, readable: `expected "failed", got "success"`. */
  message: string;
}

const MISSING = Symbol('missing');

/** JSON for humans: short, one line; a missing value reads (missing). */
export function show(value: unknown, max = 160): string {
  if (value === MISSING || value === undefined) return '(missing)';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A JSON object: not null, not a list. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return path ? `${path}.${key}` : key;
}

/**
 * A partial deep match. Objects: every key the expectation gives must match, recursively (others
 * are ignored). Arrays: the same length, and each element matches partially. Scalars (and null):
 * strictly equal. Returns the first mismatch, or null when `actual` satisfies `expected`.
 */
export function partialMatch(expected: unknown, actual: unknown, path = ''): Mismatch | null {
  const mismatch = (message: string): Mismatch => ({ path, expected, actual: actual === MISSING ? undefined : actual, message });
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return mismatch(`expected a list ${show(expected)}, got ${show(actual)}`);
    if (actual.length !== expected.length) return mismatch(`expected ${expected.length} item${expected.length === 1 ? '' : 's'}, got ${actual.length}: ${show(actual)}`);
    for (const [i, item] of expected.entries()) {
      const inner = partialMatch(item, actual[i], join(path, i));
      if (inner) return inner;
    }
    return null;
  }
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) return mismatch(`expected an object ${show(expected)}, got ${show(actual)}`);
    for (const [key, value] of Object.entries(expected)) {
      const inner = partialMatch(value, Object.hasOwn(actual, key) ? actual[key] : MISSING, join(path, key));
      if (inner) return inner;
    }
    return null;
  }
  if (actual === MISSING) return mismatch(`expected ${show(expected)}, got (missing)`);
  if (Object.is(expected, actual) || expected === actual) return null;
  return mismatch(`expected ${show(expected)}, got ${show(actual)}`);
}

/** `at body.data.status: expected "failed", got "success"`. */
export function describeMismatch(m: Mismatch, root?: string): string {
  const where = [root, m.path].filter(Boolean).join(m.path.startsWith('[') ? '' : '.');
  return where ? `at ${where}: ${m.message}` : m.message;
}

export class ScriptReferenceError extends Error {}

const REFERENCE = /\$\{([^}]*)\}/g;
const WHOLE_REFERENCE = /^\$\{([^}]*)\}$/;

/** Looks up `name.path.to.value` (or `name.items[0].id`, `name.items.0.id`) among saved values. */
export function resolveReference(expression: string, vars: Readonly<Record<string, unknown>>): unknown {
  const parts = expression
    .trim()
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .filter((p) => p !== '');
  const [name, ...rest] = parts;
  if (!name) throw new ScriptReferenceError(`\${${expression}} names nothing`);
  if (!Object.hasOwn(vars, name)) {
    const known = Object.keys(vars);
    throw new ScriptReferenceError(`\${${expression}}: no saved response named ${name}${known.length ? ` (saved: ${known.join(', ')})` : ' (save one with `as:` on a request step)'}`);
  }
  let value: unknown = vars[name];
  let walked = name;
  for (const key of rest) {
    if (Array.isArray(value) && /^\d+$/.test(key)) value = value[Number(key)];
    else if (isPlainObject(value) && Object.hasOwn(value, key)) value = value[key];
    else value = undefined;
    if (value === undefined) throw new ScriptReferenceError(`\${${expression}}: ${walked} has no ${key}`);
    walked = `${walked}.${key}`;
  }
  return value;
}

/**
 * Replaces `${name.path}` in every string of `value`, recursively through lists and objects. A
 * string that is exactly one reference becomes the referenced value itself, keeping its type (a
 * number stays a number, an object an object); references inside longer strings are spliced in
 * as text (objects as JSON).
 */
export function interpolate(value: unknown, vars: Readonly<Record<string, unknown>>): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_REFERENCE.exec(value);
    if (whole) return resolveReference(whole[1]!, vars);
    return value.replace(REFERENCE, (_m, expression: string) => {
      const v = resolveReference(expression, vars);
      return typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, vars));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, vars)]));
  return value;
}
