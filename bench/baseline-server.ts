// The baseline: a bare express 5 endpoint in its own process, answering the same JSON bytes as the
// railyard endpoint being measured. It parses the JSON body as railyard must and does nothing else,
// so a ratio against it shows what railyard's own work costs on this machine, in this run.
//
// Started by launchBaseline (bench/launch.ts) with:
//   BENCH_BASELINE_PORT, BENCH_BASELINE_METHOD (get | post), BENCH_BASELINE_PATH,
//   BENCH_BASELINE_STATUS, BENCH_BASELINE_BODY_FILE (the response bytes)
import { readFileSync } from 'node:fs';
import express from 'express';

export function startBaselineServer(env: NodeJS.ProcessEnv = process.env): void {
  const port = Number(env.BENCH_BASELINE_PORT);
  const method = env.BENCH_BASELINE_METHOD === 'get' ? 'get' : 'post';
  const path = env.BENCH_BASELINE_PATH ?? '/';
  const status = Number(env.BENCH_BASELINE_STATUS ?? 200);
  const body = readFileSync(env.BENCH_BASELINE_BODY_FILE ?? '', 'utf8');

  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app[method](path, express.json(), (_req, res) => {
    res.status(status).type('application/json').send(body);
  });
  app.listen(port, '127.0.0.1', () => process.stdout.write(`baseline listening on 127.0.0.1:${port}: ${method.toUpperCase()} ${path} -> ${status}\n`));
}

startBaselineServer();
