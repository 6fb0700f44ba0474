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
