import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

// podman as this project's container tests drive it. The flags suit restricted hosts such as the
// CI machine (docs/deployment.md, "Run with Docker or podman"): runc (crun fails on its cgroups),
// explicit ulimits (raising rlimits is not permitted), the host network for the build (apt, npm),
// and the docker image format (the OCI format drops HEALTHCHECK).
export const ROOT = resolve(import.meta.dirname, '../..');
export const RUNTIME = process.env.RAILYARD_CONTAINER_RUNTIME ?? 'runc';
export const RUN_FLAGS = ['--runtime', RUNTIME, '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];
export const BUILD_FLAGS = ['--runtime', RUNTIME, '--network', 'host', '--format', 'docker'];

export interface Result {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs podman and answers its exit status and output (podman's systemd timer warnings dropped). */
export function podman(args: string[], timeoutMs = 120_000): Result {
  const run = spawnSync('podman', args, { cwd: ROOT, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  // Without systemd, podman cannot arm the periodic health-check timer and says so on every
  // create and remove; health checks are run on demand (podman healthcheck run) instead.
  const stderr = (run.stderr ?? '')
    .split('\n')
    .filter((l) => !l.includes('/run/systemd/private'))
    .join('\n');
  return { status: run.status ?? -1, stdout: (run.stdout ?? '').trim(), stderr };
}

/**
 * podman without blocking the event loop: for calls made while the test also serves (the webhook
 * receiver stamps each receipt with its arrival time) or drives clients.
 */
export function podmanAsync(args: string[], timeoutMs = 120_000): Promise<Result> {
  return new Promise((done) => {
    const child = spawn('podman', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) =>
      done({
        status: code ?? -1,
        stdout: stdout.trim(),
        stderr: stderr
          .split('\n')
          .filter((l) => !l.includes('/run/systemd/private'))
          .join('\n'),
      }),
    );
  });
}

/** Runs podman and throws, with its output, unless it exits 0. */
export function podmanOk(args: string[], timeoutMs?: number): string {
  const r = podman(args, timeoutMs);
  if (r.status !== 0) throw new Error(`podman ${args.join(' ')} exited ${r.status}:\n${r.stderr.slice(-4000)}\n${r.stdout.slice(-4000)}`);
  return r.stdout;
}

/** The base images to build on (deploy/base-images.sh: the real ones or local stand-ins). */
export function baseImages(): { NODE_IMAGE: string; POSTGRES_IMAGE: string; NGINX_IMAGE: string } {
  const run = spawnSync('deploy/base-images.sh', { cwd: ROOT, encoding: 'utf8', timeout: 600_000 });
  if (run.status !== 0) throw new Error(`deploy/base-images.sh exited ${run.status}:\n${run.stderr}`);
  const vars = Object.fromEntries(
    run.stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
  return vars as { NODE_IMAGE: string; POSTGRES_IMAGE: string; NGINX_IMAGE: string };
}

/** Builds the image from the project's Dockerfile; answers how long the build took (ms). */
export function buildImage(tag: string, nodeImage: string, dockerfile = 'Dockerfile'): number {
  const t0 = performance.now();
  podmanOk(['build', ...BUILD_FLAGS, '--build-arg', `NODE_IMAGE=${nodeImage}`, '-f', dockerfile, '-t', tag, '.'], 600_000);
  return Math.round(performance.now() - t0);
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** Polls url until it answers 200; answers the ms it took, or throws after limitMs (with why). */
export async function firstOk(url: string, limitMs: number, stillRunning: () => boolean): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return Math.round(performance.now() - t0);
    } catch {
      // Not listening yet.
    }
    if (!stillRunning()) throw new Error(`the container stopped before ${url} answered 200`);
    if (performance.now() - t0 > limitMs) throw new Error(`${url} did not answer 200 within ${limitMs} ms`);
    await sleep(50);
  }
}
