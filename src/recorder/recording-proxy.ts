import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config/config.ts';
import type { WireProfile, WireRequest } from '../providers/wire-profile.ts';

/** How an exchange ended: answered, given up by railyard's adapter (its timeout), or cut by the upstream. */
export type ExchangeEnding = 'answered' | 'abandoned' | 'reset' | 'unreachable';

/** One call from railyard's adapter to the upstream, as the adapter sent it (before the callback rewrite). */
export interface RecordedExchange {
  request: WireRequest;
  /** Milliseconds on the recorder's monotonic clock. */
  startedAt: number;
  endedAt: number;
  ending: ExchangeEnding;
  status?: number;
  body?: string;
}

/** One callback the upstream sent, and what railyard answered when it was passed on. */
export interface RecordedCallback {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  forwardedStatus?: number;
}

export interface RecordingProxyOptions {
  profile: WireProfile;
  config: Config;
  /** The real upstream's base URL; its path prefix is kept on every forwarded call. */
  upstream: string;
  /** Public origin the upstream can call back on (a tunnel); default the proxy's own address. */
  callbackOrigin?: string;
  now?: () => number;
}

// Hop-by-hop headers, and the length the proxy sets itself.
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'proxy-connection', 'upgrade', 'te', 'trailer']);

function plainHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function readBytes(message: IncomingMessage): Promise<Buffer> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    message.on('data', (c: Buffer) => chunks.push(c));
    message.on('end', () => done(Buffer.concat(chunks)));
    message.on('error', fail);
  });
}

async function readBody(message: IncomingMessage): Promise<string> {
  return (await readBytes(message)).toString('utf8');
}

/**
 * Sits between railyard's adapter and a real upstream: forwards each call unchanged but for the
 * callback URL, which it points at itself, and passes each callback on to where the adapter
 * wanted it (or, for webhooks sent to a URL set once, to where receiveWebhooks says), byte for
 * byte. Everything that crosses is kept, in memory, for the scenario writer.
 */
export class RecordingProxy {
  readonly exchanges: RecordedExchange[] = [];
  readonly callbacks: RecordedCallback[] = [];
  private readonly server: Server;
  private readonly upstream: URL;
  private readonly now: () => number;
  /** Callback paths handed to the upstream, to the URL railyard gave. */
  private readonly callbackTargets = new Map<string, string>();
  private origin = '';

  constructor(private readonly options: RecordingProxyOptions) {
    this.upstream = new URL(options.upstream);
    this.now = options.now ?? (() => performance.now());
    // A request cut off before its body arrived has nothing to forward.
    this.server = createServer((req, res) => void this.handle(req, res).catch(() => res.destroy()));
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((done, fail) => {
      this.server.once('error', fail);
      this.server.listen(port, host, () => done());
    });
    const address = this.server.address() as AddressInfo;
    this.origin = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
    return this.origin;
  }

  /** Where the upstream can reach the proxy: the public origin given, or the proxy's own. */
  get callbackOrigin(): string {
    return (this.options.callbackOrigin ?? this.origin).replace(/\/+$/, '');
  }

  /**
   * Webhooks the upstream posts to `path` (a URL set once, in its dashboard) are passed on to
   * `target`; the URL the upstream must be given.
   */
  receiveWebhooks(path: string, target: string): string {
    this.callbackTargets.set(path, target);
    return `${this.callbackOrigin}${path}`;
  }

  /** Where railyard's adapter is pointed: the proxy with the upstream's path prefix. */
  get baseUrl(): string {
    return `${this.origin}${this.upstream.pathname.replace(/\/+$/, '')}`;
  }

  close(): Promise<void> {
    return new Promise((done) => {
      this.server.close(() => done());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url ?? '/';
    const bytes = await readBytes(req);
    const request: WireRequest = { method: req.method ?? 'GET', path, headers: plainHeaders(req.headers), body: bytes.toString('utf8') };
    const target = this.callbackTargets.get(path.split('?')[0]!);
    if (target) return this.passCallback(request, bytes, target, res);
    return this.forward(request, res);
  }

  /** The callback URL the upstream gets: this proxy (or the public origin), on the same path, so path signatures still hold. */
  private rewrite = (original: string): string => {
    const url = new URL(original);
    this.callbackTargets.set(url.pathname, original);
    return `${this.callbackOrigin}${url.pathname}${url.search}`;
  };

  private forward(request: WireRequest, res: ServerResponse): void {
    const startedAt = this.now();
    const exchange: RecordedExchange = { request, startedAt, endedAt: startedAt, ending: 'abandoned' };
    this.exchanges.push(exchange);
    const sent = this.options.profile.rewriteCallback(request, this.rewrite, this.options.config);
    const target = new URL(`${this.upstream.origin}${sent.path}`);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const end = (ending: ExchangeEnding, status?: number, body?: string) => {
      if (settled) return;
      settled = true;
      Object.assign(exchange, { ending, endedAt: this.now(), ...(status !== undefined ? { status, body } : {}) });
    };
    const outgoing = send(target, { method: sent.method, headers: { ...sent.headers, host: target.host, 'content-length': Buffer.byteLength(sent.body) } });
    // railyard's adapter gave up (its timeout): the upstream is let go too, as a socket would be.
    res.on('close', () => {
      if (!res.writableFinished) {
        end('abandoned');
        outgoing.destroy();
      }
    });
    outgoing.on('response', async (answer) => {
      let text: string;
      try {
        text = await readBody(answer);
      } catch {
        end('reset');
        return void res.destroy();
      }
      end('answered', answer.statusCode ?? 502, text);
      if (res.destroyed) return;
      res.writeHead(answer.statusCode ?? 502, { ...plainHeaders(answer.headers), 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    outgoing.on('error', (err: NodeJS.ErrnoException) => {
      if (res.destroyed) return end('abandoned');
      end(err.code === 'ECONNREFUSED' || err.code === 'ENOTFOUND' ? 'unreachable' : 'reset');
      // The adapter sees what the upstream did: a connection that ends without an answer.
      res.destroy();
    });
    outgoing.end(sent.body);
  }

  /** The exact bytes go on: a signature over the raw body (Paystack's, the bank rail's) still holds. */
  private async passCallback(request: WireRequest, bytes: Buffer, target: string, res: ServerResponse): Promise<void> {
    const callback: RecordedCallback = { ...request, receivedAt: this.now() };
    this.callbacks.push(callback);
    try {
      const answer = await fetch(target, {
        method: request.method,
        headers: request.headers,
        ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body: bytes }),
      });
      const text = await answer.text();
      callback.forwardedStatus = answer.status;
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' });
      res.end(text);
    } catch {
      res.writeHead(502, { 'content-type': 'text/plain' }).end('railyard could not be reached');
    }
  }
}
