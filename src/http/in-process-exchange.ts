import { AsyncLocalStorage } from 'node:async_hooks';
import { IncomingMessage, ServerResponse, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import { Duplex } from 'node:stream';
import { guardExchange, httpExchange, HttpConnectionError, type HttpExchangeRequest, type HttpExchangeResponse } from '../kernel/http-exchange.ts';
import type { HttpExchange } from '../kernel/http-exchange-thread.ts';

/**
 * A socket that carries nothing: the request's body is pushed into the message, the answer is
 * taken from the response object. It is what `req.socket` is to the handler, so a mock that hangs
 * up (`req.socket.destroy()`) or is hung up on (the caller's deadline) closes it as a peer would.
 */
class LoopbackSocket extends Duplex {
  readonly remoteAddress = '127.0.0.1';
  readonly remoteFamily = 'IPv4';
  readonly remotePort = 0;
  readonly localAddress = '127.0.0.1';
  readonly localPort = 0;
  readonly encrypted = undefined;
  override _read(): void {}
  override _write(_chunk: unknown, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    done();
  }
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
}

/** Requests handed to the app in process (inProcessExchange), not read off a socket. */
const inProcess = new WeakSet<IncomingMessage>();

/** Whether `req` was handed over in process by railyard itself (a call of its adapters to its own mocks). */
export function servedInProcess(req: IncomingMessage): boolean {
  return inProcess.has(req);
}

/**
 * Hands a request to `listener` (the express app) in this process and takes its answer, as
 * httpExchange would have over a socket to the same app: the same method, path, headers (in lower
 * case, with host, content-length and connection, as a client sends them) and bytes; the same
 * deadline; a hang-up from the handler is the same connection error. What it saves is the two
 * HTTP stacks and the loopback in between: a charge's call to railyard's own mock costs what the
 * mock does, not what a socket does.
 *
 * The handler runs in the async context the exchange was made in, not the caller's: over a socket
 * a request starts afresh (no job, no transaction of the caller's), and so it does here.
 */
export function inProcessExchange(listener: RequestListener): (url: URL, request: HttpExchangeRequest) => Promise<HttpExchangeResponse> {
  const afresh = AsyncLocalStorage.snapshot();
  return (url, request) =>
    new Promise<HttpExchangeResponse>((resolve, reject) => {
      const socket = new LoopbackSocket();
      const req = new IncomingMessage(socket as never);
      inProcess.add(req);
      req.method = request.method.toUpperCase();
      req.url = `${url.pathname}${url.search}`;
      req.httpVersion = '1.1';
      req.httpVersionMajor = 1;
      req.httpVersionMinor = 1;
      const headers: IncomingHttpHeaders = { host: url.host };
      for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
      if (request.body !== undefined) headers['content-length'] = String(Buffer.byteLength(request.body));
      headers.connection = 'keep-alive';
      req.headers = headers;
      req.rawHeaders = Object.entries(headers).flatMap(([name, value]) => [name, String(value)]);
      if (request.body !== undefined) req.push(Buffer.from(request.body, 'utf8'));
      req.push(null);
      req.complete = true;

      const res = new ServerResponse(req);
      const chunks: Buffer[] = [];
      let settled = false;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        guard.release();
        settle();
      };
      const take = (chunk: unknown, encoding?: unknown) => {
        if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
        chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array));
      };
      // Own properties: express swaps the response's prototype for its own, which keeps these.
      const sent = res as unknown as { _header: string | null; finished: boolean; destroyed: boolean };
      Object.assign(res, {
        write(chunk: unknown, encoding?: unknown) {
          sent._header ??= 'sent';
          take(chunk, encoding);
          return true;
        },
        end(chunk?: unknown, encoding?: unknown) {
          if (sent.finished) return res;
          sent._header ??= 'sent';
          take(chunk, encoding);
          sent.finished = true;
          const answer = { status: res.statusCode, headers: lowerCased(res.getHeaders()), text: Buffer.concat(chunks).toString('utf8') };
          finish(() => resolve(answer));
          process.nextTick(() => {
            res.emit('finish');
            res.emit('close');
            socket.destroy();
          });
          return res;
        },
        destroy() {
          if (!sent.destroyed) {
            sent.destroyed = true;
            socket.destroy();
          }
          return res;
        },
      });
      // The handler hung up without an answer (a simulated reset or timeout), or the caller gave up.
      socket.once('close', () => {
        finish(() => reject(new HttpConnectionError('socket hang up', 'ECONNRESET')));
        if (!sent.finished) {
          sent.destroyed = true;
          res.emit('close');
        }
      });
      const guard = guardExchange(
        request,
        (error) => finish(() => reject(error)),
        () => socket.destroy(),
      );
      afresh(() => listener(req, res));
    });
}

function lowerCased(headers: Record<string, number | string | string[] | undefined>): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = typeof value === 'number' ? String(value) : value;
  return out;
}

/**
 * The exchange railyard's adapters use: a call to railyard's own mocks (the service's base URL,
 * under /mocks/) is handed to the app in process; anything else (a real upstream, a mock served
 * by another process) goes over HTTP.
 */
export function ownMocksExchange(listener: RequestListener, serviceBaseUrl: () => string): HttpExchange {
  const local = inProcessExchange(listener);
  return (url, request) => {
    const target = typeof url === 'string' ? new URL(url) : url;
    const base = new URL(serviceBaseUrl());
    // Only at the root: under a path a proxy may be rewriting, the app's own paths are not the URL's.
    if (target.origin === base.origin && base.pathname.replace(/\/+$/, '') === '' && target.pathname.startsWith('/mocks/')) return local(target, request);
    return httpExchange(target, request);
  };
}
