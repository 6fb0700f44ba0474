import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { HttpConnectionError, HttpTimeoutError, type HttpExchangeRequest, type HttpExchangeResponse } from './http-exchange.ts';

/** Where the thread loads undici from: resolved here, since an eval'd thread resolves from the working directory. */
const UNDICI = createRequire(import.meta.url).resolve('undici');

/** One exchange, however it is carried: the in-thread httpExchange or an HttpExchangeThread. */
export type HttpExchange = (url: string | URL, request: HttpExchangeRequest) => Promise<HttpExchangeResponse>;

interface Ask {
  id: number;
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
}

type Answer =
  | { id: number; ok: true; status: number; headers: Record<string, string | string[] | undefined>; text: string }
  | { id: number; ok: false; kind: 'timeout' | 'connection'; message: string; code: string | undefined };

/**
 * The body of the thread, sent to it as source (it imports nothing of ours, so it needs no loader
 * and runs the same from src/ under tsx and from dist/). It does what httpExchange does: kept-alive
 * connections, the answer read whole, one deadline for the whole exchange, no redirect followed.
 * It sends with undici (half the CPU of node:http per exchange).
 */
function threadMain(): void {
  const req = require as (id: string) => unknown;
  const { parentPort, workerData } = req('node:worker_threads') as typeof import('node:worker_threads');
  const undici = req((workerData as { undici: string }).undici) as typeof import('undici');
  const dispatcher = new undici.Agent({ connections: 256 });
  // Answers go back in batches: one message per turn of the thread's loop, not one per exchange.
  let answers: Answer[] = [];
  const answer = (a: Answer) => {
    if (answers.length === 0)
      setImmediate(() => {
        const batch = answers;
        answers = [];
        parentPort!.postMessage(batch);
      });
    answers.push(a);
  };
  parentPort!.on('message', (asks: Ask[]) => {
    for (const ask of asks) exchange(ask);
  });
  function exchange(ask: Ask): void {
    let target: URL;
    try {
      target = new URL(ask.url);
    } catch (err) {
      answer({ id: ask.id, ok: false, kind: 'connection', message: (err as Error).message, code: (err as NodeJS.ErrnoException).code });
      return;
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') {
      answer({ id: ask.id, ok: false, kind: 'connection', message: `protocol ${target.protocol} is not supported`, code: 'ERR_INVALID_PROTOCOL' });
      return;
    }
    // Credentials in the URL become basic auth, as node:http (httpExchange) makes them.
    const headers = { ...ask.headers };
    if (target.username || target.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}`;
      target.username = '';
      target.password = '';
    }
    viaUndici({ ...ask, headers }, target);
  }
  function viaUndici(ask: Ask, target: URL): void {
    const controller = new AbortController();
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, ask.timeoutMs);
    const failed = (err: Error) => {
      clearTimeout(deadline);
      const cause = (err as Error & { cause?: NodeJS.ErrnoException }).cause;
      if (timedOut) answer({ id: ask.id, ok: false, kind: 'timeout', message: `timed out after ${ask.timeoutMs} ms`, code: undefined });
      else answer({ id: ask.id, ok: false, kind: 'connection', message: err.message, code: (err as NodeJS.ErrnoException).code ?? cause?.code });
    };
    undici
      .request(target, { method: ask.method as 'POST', headers: ask.headers, body: ask.body, dispatcher, signal: controller.signal })
      .then(async (res) => {
        const text = await res.body.text();
        clearTimeout(deadline);
        answer({ id: ask.id, ok: true, status: res.statusCode, headers: res.headers, text });
      })
      .catch(failed);
  }
}

/**
 * HTTP exchanges made on a thread of their own. The parsing, socket work and bookkeeping of a
 * client request cost the event loop about 50 µs each; handed to the thread, about 13: a clock
 * advance that delivers thousands of webhooks keeps the store's thread for the store. Asks made in
 * the same turn of the event loop go to the thread as one message.
 *
 * The thread is unref'd (it never keeps a process alive) and restarted if it dies; an exchange
 * in flight when it dies fails as a connection error, as a dropped connection would.
 */
export class HttpExchangeThread {
  private worker: Worker | undefined;
  private readonly inFlight = new Map<number, { resolve(answer: HttpExchangeResponse): void; reject(error: Error): void }>();
  private outbox: Ask[] = [];
  private nextId = 0;
  private closed = false;

  /** The exchange function to hand to whoever sends (it keeps `this`). */
  readonly exchange: HttpExchange = (url, request) => this.send(url, request);

  private send(url: string | URL, request: HttpExchangeRequest): Promise<HttpExchangeResponse> {
    if (this.closed) return Promise.reject(new HttpConnectionError('the exchange thread is closed', undefined));
    const id = ++this.nextId;
    return new Promise<HttpExchangeResponse>((resolve, reject) => {
      this.inFlight.set(id, { resolve, reject });
      if (this.outbox.length === 0) queueMicrotask(() => this.flush());
      this.outbox.push({ id, url: String(url), method: request.method, headers: { ...request.headers }, body: request.body, timeoutMs: request.timeoutMs });
    });
  }

  private flush(): void {
    const asks = this.outbox;
    this.outbox = [];
    if (asks.length > 0) this.thread().postMessage(asks);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    // __name: what a transpiler keeping function names may call inside the body (esbuild, tsx).
    const worker = new Worker(`var __name = (f) => f;\n(${threadMain.toString()})()`, { eval: true, workerData: { undici: UNDICI } });
    worker.unref();
    worker.on('message', (answers: Answer[]) => {
      for (const answer of answers) this.answer(answer);
    });
    const lost = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const [id, waiting] of this.inFlight) {
        this.inFlight.delete(id);
        waiting.reject(new HttpConnectionError(`the exchange thread stopped (${why})`, undefined));
      }
    };
    worker.on('error', (err) => lost(err.message));
    worker.on('exit', (code) => lost(`exit ${code}`));
    this.worker = worker;
    return worker;
  }

  private answer(answer: Answer): void {
    const waiting = this.inFlight.get(answer.id);
    if (!waiting) return;
    this.inFlight.delete(answer.id);
    if (answer.ok) waiting.resolve({ status: answer.status, headers: answer.headers as HttpExchangeResponse['headers'], text: answer.text });
    else waiting.reject(answer.kind === 'timeout' ? new HttpTimeoutError(answer.message) : new HttpConnectionError(answer.message, answer.code));
  }

  /** Ends the thread; exchanges still in flight fail. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker) await worker.terminate();
  }
}
