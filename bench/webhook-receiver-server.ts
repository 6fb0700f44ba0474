// The merchant's webhook endpoint, in its own process so that its answers never wait behind the
// load generator's event loop (railyard sends deliveries one at a time: a slow receiver would
// slow railyard down). Counts deliveries by event type, records arrival times of one type, and
// can fail chosen events a few times so that railyard's retries happen.
//
// Started by startWebhookReceiver (bench/webhook-receiver.ts) with an IPC channel and:
//   BENCH_RECEIVER_PORT, BENCH_RECEIVER_TRACK (event type whose arrivals are timed),
//   BENCH_RECEIVER_FAIL_FRACTION, BENCH_RECEIVER_FAIL_TIMES, BENCH_RECEIVER_ALWAYS_FAIL_FRACTION
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface ReceiverStats {
  requests: number;
  failuresSent: number;
  delivered: Record<string, number>;
  /** Epoch milliseconds (sub-ms) of each 2xx-answered delivery of the tracked type. */
  arrivals: number[];
  /** The first 2xx-answered arrival of the tracked type per object (data.object.id), epoch ms. */
  arrivalsByObject: Record<string, number>;
}

/** A stable fraction of ids, from a hash of the id: which events a failing receiver fails. */
export function idFraction(id: string): number {
  return createHash('sha1').update(id).digest().readUInt32BE(0) / 0x1_0000_0000;
}

export function startWebhookReceiverServer(env: NodeJS.ProcessEnv = process.env): void {
  const port = Number(env.BENCH_RECEIVER_PORT);
  const tracked = env.BENCH_RECEIVER_TRACK ?? 'charge.success';
  const failFraction = Number(env.BENCH_RECEIVER_FAIL_FRACTION ?? 0);
  const failTimes = Number(env.BENCH_RECEIVER_FAIL_TIMES ?? 0);
  const alwaysFailFraction = Number(env.BENCH_RECEIVER_ALWAYS_FAIL_FRACTION ?? 0);
  // How often to fail an event, decided by a hash of its id (the same on every retry).
  const failuresFor = (id: string) => {
    const f = idFraction(id);
    return f < failFraction ? failTimes : f < failFraction + alwaysFailFraction ? Number.POSITIVE_INFINITY : 0;
  };
  const attempts = new Map<string, number>();
  let stats: ReceiverStats = { requests: 0, failuresSent: 0, delivered: {}, arrivals: [], arrivalsByObject: {} };

  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'); // readiness probe
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      stats.requests++;
      const id = String(req.headers['webhook-id'] ?? '');
      const seen = attempts.get(id) ?? 0;
      attempts.set(id, seen + 1);
      if (seen < failuresFor(id)) {
        stats.failuresSent++;
        res.writeHead(500, { 'content-type': 'text/plain' }).end('failing on purpose');
        return;
      }
      const at = performance.timeOrigin + performance.now();
      let type = 'unknown';
      let objectId: string | undefined;
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: unknown; data?: { object?: { id?: unknown } } };
        type = String(event.type ?? 'unknown');
        if (typeof event.data?.object?.id === 'string') objectId = event.data.object.id;
      } catch {
        // counted as unknown
      }
      stats.delivered[type] = (stats.delivered[type] ?? 0) + 1;
      if (type === tracked) {
        stats.arrivals.push(at);
        if (objectId !== undefined && stats.arrivalsByObject[objectId] === undefined) stats.arrivalsByObject[objectId] = at;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  process.on('message', (message: { type?: string; reset?: boolean }) => {
    if (message?.type !== 'stats') return;
    process.send?.({ type: 'stats', stats });
    if (message.reset) stats = { requests: 0, failuresSent: 0, delivered: {}, arrivals: [], arrivalsByObject: {} };
  });
  process.on('disconnect', () => process.exit(0)); // the bench is gone
  server.listen(port, '127.0.0.1', () => process.stdout.write(`webhook receiver on 127.0.0.1:${port}, timing ${tracked}\n`));
}

startWebhookReceiverServer();
