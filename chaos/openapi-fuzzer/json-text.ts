// JSON as the fuzzer writes it: numbers JSON.stringify cannot spell, and objects with no
// prototype, so `__proto__` and `constructor` travel as fields like any other.

// Request and response bodies are arbitrary JSON.
export type Json = Record<string, any>;

/** JSON text written as-is: -0, 1e400, 9007199254740993 and other numbers JSON.stringify cannot spell. */
export class RawJson {
  constructor(readonly text: string) {}
}

export function jsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .filter((k) => (value as Json)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${jsonText((value as Json)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A prototype-free object, so `__proto__` is an own field like any other. */
export function obj(fields: Json): Json {
  const out = Object.create(null) as Json;
  for (const key of Reflect.ownKeys(fields)) if (typeof key === 'string') out[key] = fields[key];
  // `{ __proto__: x }` in a literal sets the prototype instead of a field.
  const proto = Object.getPrototypeOf(fields);
  // biome-ignore lint/suspicious/noProto: out has no prototype, so this sets an own field named __proto__
  if (proto !== Object.prototype && proto !== null) out.__proto__ = proto;
  return out;
}

export function withEntry(target: Json, name: string, value: unknown): Json {
  const out = Object.assign(Object.create(null) as Json, isObject(target) ? target : {});
  out[name] = value;
  return out;
}

export function isObject(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof RawJson);
}
