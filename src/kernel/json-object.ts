/** A JSON object from raw text, or undefined for anything else (no text, bad JSON, an array, a scalar). */
export function parseJsonObject(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A field's value when it is a string. */
export function textField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Whether a parsed JSON value is an object (not null, not an array). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One header's value from node's headers (lower-case names), the first when it came more than once. */
export function headerValue(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
