export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** One JSON line per entry. Callers never pass secrets; the fields are logged as given. */
export function jsonLogger(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Logger {
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) => write(JSON.stringify({ level, msg: message, ...fields }));
  return { info: log('info'), warn: log('warn'), error: log('error') };
}

/**
 * The same logger with every string (the message and each field, however deep) passed through
 * `redact` first: the last guard, for a secret that reaches a log line inside a path, a URL or
 * an error message.
 */
export function redactingLogger(inner: Logger, redact: (text: string) => string): Logger {
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    if (Array.isArray(value)) return value.map(clean);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
    return value;
  };
  const log = (level: keyof Logger) => (message: string, fields?: Record<string, unknown>) => inner[level](redact(message), fields && (clean(fields) as Record<string, unknown>));
  return { info: log('info'), warn: log('warn'), error: log('error') };
}
