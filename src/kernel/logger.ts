export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };

/** One JSON line per entry. Callers never pass secrets; the fields are logged as given. */
export function jsonLogger(write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Logger {
  const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
    write(JSON.stringify({ level, msg: message, ...fields }));
  return { info: log('info'), warn: log('warn'), error: log('error') };
}
