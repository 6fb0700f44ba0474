import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTour, TOUR_SERVER_ENV, tourExpectations } from '../support/readme-tour.ts';
import { assetText, SERVED_ASSETS } from '../support/served-assets.ts';
import { baseImages, buildImage, firstOk, podman, podmanOk, RUN_FLAGS } from './podman.ts';

// The image a merchant runs, built from the project's Dockerfile and run with podman (npm run
// test:container; needs root and podman, so it is not part of `npm test`). On a host that cannot
// pull node:24-slim, deploy/base-images.sh builds a local stand-in first.
const run = randomUUID().slice(0, 8);
const image = `localhost/railyard:container-test-${run}`;
const volume = `railyard-container-test-${run}`;
const names: string[] = [];
const KEY = 'sk_test_railyard_sandbox_0000000000000000';
const figures: Record<string, number | string> = {};

function isRunning(name: string): boolean {
  return podman(['inspect', '--format', '{{.State.Running}}', name]).stdout === 'true';
}

/** Starts the image detached on a fresh host port with the data volume; answers its name and base URL. */
async function start(env: Record<string, string> = {}): Promise<{ name: string; base: string; msToFirstOk: number }> {
  const name = `railyard-ct-${run}-${names.length}`;
  const port = 30_000 + Math.floor(Math.random() * 20_000);
  names.push(name);
  const envFlags = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  const t0 = performance.now();
  podmanOk(['run', '-d', ...RUN_FLAGS, '--name', name, '-p', `127.0.0.1:${port}:4010`, '-v', `${volume}:/data`, ...envFlags, image]);
  const base = `http://127.0.0.1:${port}`;
  try {
    await firstOk(`${base}/healthz`, 60_000, () => isRunning(name));
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- podman logs ${name}:\n${podman(['logs', name]).stdout}${podman(['logs', name]).stderr}`);
  }
  return { name, base, msToFirstOk: Math.round(performance.now() - t0) };
}

let first: { name: string; base: string; msToFirstOk: number };
let outputs: string[] = [];

beforeAll(async () => {
  const { NODE_IMAGE } = baseImages();
  figures.nodeImage = NODE_IMAGE;
  figures.buildMs = buildImage(image, NODE_IMAGE);
  figures.imageBytes = Number(podmanOk(['image', 'inspect', '--format', '{{.Size}}', image]));
  first = await start(TOUR_SERVER_ENV);
  figures.runToFirstHealthz200Ms = first.msToFirstOk;
  outputs = runTour(first.base);
}, 900_000);

afterAll(() => {
  for (const name of names) podman(['rm', '-f', '-v', '-t', '0', name]);
  podman(['volume', 'rm', '-f', volume]);
  podman(['rmi', '-f', image]);
  console.log(`container figures: ${JSON.stringify(figures)}`);
}, 120_000);

describe('the README tour against the container', () => {
  for (const [step, check] of tourExpectations) it(step, () => check(outputs));

  it('serves the OpenAPI document and the dashboard', async () => {
    expect((await fetch(`${first.base}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${first.base}/dashboard`)).status).toBe(200);
  });

  it("serves the dashboard's and the hosted checkout's stylesheets and scripts (npm run build copied them into dist/)", async () => {
    for (const asset of SERVED_ASSETS) {
      const res = await fetch(`${first.base}${asset.url}`);
      expect(res.status, asset.url).toBe(200);
      expect(res.headers.get('content-type'), asset.url).toBe(asset.contentType);
      expect(await res.text(), asset.url).toBe(assetText(asset));
    }
  });
});

describe('the image', () => {
  it('runs as the unprivileged node user (uid 1000), not root', () => {
    expect(podmanOk(['exec', first.name, 'id', '-u'])).toBe('1000');
    expect(podmanOk(['image', 'inspect', '--format', '{{.Config.User}}', image])).toBe('node');
  });

  it('installs production dependencies only, without the dev toolchain', () => {
    const listing = podmanOk(['exec', first.name, 'ls', '/app/node_modules']).split('\n');
    expect(listing).toContain('express');
    for (const dev of ['vitest', 'typescript', 'playwright-core', 'node', 'autocannon']) expect(listing).not.toContain(dev);
    figures.nodeModules = podmanOk(['exec', first.name, 'du', '-sh', '/app/node_modules']).split(/\s/)[0]!;
  });

  it('declares a HEALTHCHECK on /healthz, and it passes', () => {
    expect(podmanOk(['image', 'inspect', '--format', '{{json .Config.Healthcheck.Test}}', image])).toContain('/healthz');
    const check = podman(['healthcheck', 'run', first.name]);
    expect(check.status, check.stderr + check.stdout).toBe(0);
  });

  it('keeps a charge on the data volume across a new container, after a graceful stop on SIGTERM (exit 0)', async () => {
    const created = await fetch(`${first.base}/api/v1/charges`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'idempotency-key': `container-${run}`, 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 2500, currency: 'GHS', channel: 'momo', msisdn: '0551234987' }),
    });
    const body = await created.text();
    expect(created.status, body).toBeLessThan(300);
    const chargeId = /"id":"(chg_[a-z0-9]+)"/.exec(body)?.[1];
    expect(chargeId, body).toBeDefined();

    // podman stop sends the image's stop signal (SIGTERM) and only SIGKILLs after 30 s: exit
    // status 0 means the server drained and exited on its own.
    const t0 = performance.now();
    podmanOk(['stop', '-t', '30', first.name], 60_000);
    figures.sigtermToExitMs = Math.round(performance.now() - t0);
    expect(podmanOk(['inspect', '--format', '{{.State.ExitCode}}', first.name])).toBe('0');

    const second = await start();
    const again = await fetch(`${second.base}/api/v1/charges/${chargeId}`, { headers: { authorization: `Bearer ${KEY}` } });
    const replayed = await again.text();
    expect(again.status, replayed).toBe(200);
    expect(replayed).toContain(`"id":"${chargeId}"`);
    expect(replayed).toContain('"amount":2500');
  });
});
