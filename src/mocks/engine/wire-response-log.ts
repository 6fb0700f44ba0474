import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { NextFunction, Request, Response } from 'express';

// What the mocks answered, written down for whoever checks it against the providers' published
// descriptions (test/fixtures/wire-schemas). Off unless RAILYARD_WIRE_RESPONSE_LOG names a
// directory: then every answer of every declared wire is one JSON line in <dir>/<pid>.jsonl
// (one file per process, so parallel test workers and spawned servers never interleave a line).

export const WIRE_RESPONSE_LOG_ENV = 'RAILYARD_WIRE_RESPONSE_LOG';

/** One answer of a mock. */
export interface WireResponseRecord {
  provider: string;
  method: string;
  /** The operation's declared path (e.g. /transfer/:idOrCode); null when no operation took it (auth, outage, route not found). */
  route: string | null;
  /** The path as called, below the mock's mount. */
  path: string;
  status: number;
  contentType: string | null;
  /** The body as sent ('' for an empty one). */
  body: string;
  /** Set when a scenario's fault made the answer (e.g. 'malformed'): not the upstream's wire, on purpose. */
  fault?: string;
  /** 'callback': not an answer but a callback the mock sent (status 0, route 'callback', path the URL's). */
  kind?: 'callback';
}

function logFile(): string | undefined {
  const dir = process.env[WIRE_RESPONSE_LOG_ENV];
  if (!dir) return undefined;
  mkdirSync(dir, { recursive: true });
  return join(dir, `${process.pid}.jsonl`);
}

/** Writes down a callback as the mock sends it, or undefined when logging is off. */
export function wireCallbackLog(provider: string): ((message: { method: string; url: string; body: string }) => void) | undefined {
  const file = logFile();
  if (!file) return undefined;
  return (message) => {
    const record: WireResponseRecord = {
      provider,
      method: message.method,
      route: 'callback',
      path: new URL(message.url).pathname,
      status: 0,
      contentType: 'application/json',
      body: message.body,
      kind: 'callback',
    };
    appendFileSync(file, `${JSON.stringify(record)}\n`);
  };
}

/** res.locals keys the pipeline fills in for the log. */
export const WIRE_ROUTE_LOCAL = 'wireRoute';
export const WIRE_FAULT_LOCAL = 'wireFault';

/**
 * Express middleware that logs each answer of `provider`'s mock, or undefined when logging is off.
 * A wire that serves only its own paths (no route-not-found answer) logs only those: any other
 * path leaves the mock, and the app answers it.
 */
export function wireResponseLog(provider: string, servesEveryPath: boolean): ((req: Request, res: Response, next: NextFunction) => void) | undefined {
  const file = logFile();
  if (!file) return undefined;
  return (req, res, next) => {
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    (res as { end: (...args: unknown[]) => Response }).end = (...args: unknown[]) => {
      const route = (res.locals[WIRE_ROUTE_LOCAL] as string | undefined) ?? null;
      if (route === null && !servesEveryPath) return end(...args);
      const [chunk] = args;
      const body = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : '';
      const record: WireResponseRecord = {
        provider,
        method: req.method,
        route,
        path: req.path,
        status: res.statusCode,
        contentType: res.get('content-type') ?? null,
        body,
        ...(res.locals[WIRE_FAULT_LOCAL] ? { fault: String(res.locals[WIRE_FAULT_LOCAL]) } : {}),
      };
      appendFileSync(file, `${JSON.stringify(record)}\n`);
      return end(...args);
    };
    next();
  };
}
