import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { podman, podmanAsync, podmanOk, RUN_FLAGS, sleep } from './podman.ts';

// deploy/compose.yaml brought up with plain podman, service by service, as Docker Compose would:
// Debian bookworm's podman-compose (1.0.3) ignores depends_on conditions (it starts everything
// at once) and garbles exec-form health checks, so it cannot run this file faithfully
// (docs/deployment.md, "Run with Docker or podman"). Only what the file uses is supported: image,
// command, environment (with ${VAR:-default}), depends_on conditions, healthcheck, restart,
// stop_grace_period, named and bind volumes, ports; one network, each service reachable by name.

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: 'service_started' | 'service_healthy' | 'service_completed_successfully' }>;
  healthcheck?: { test: string[]; interval?: string; timeout?: string; retries?: number; start_period?: string };
  restart?: string;
  stop_grace_period?: string;
  volumes?: string[];
  ports?: string[];
}

export interface StackOptions {
  project: string;
  file: string;
  /** Per service: the image to run instead of the file's (a locally built railyard, a stand-in). */
  images: Record<string, string>;
  /** Per service: environment added to the file's (test settings only). */
  extraEnv?: Record<string, Record<string, string>>;
  /** Host port for each published container port (the file's host port may be taken here). */
  hostPorts?: Record<string, number>;
}

/** ${VAR:-default} and ${VAR}, from the environment, as Compose interpolates. */
function interpolate(text: string): string {
  return text.replace(/\$\{(\w+)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => process.env[name] || (fallback ?? ''));
}

export class ComposeStack {
  readonly services: Record<string, Service>;
  readonly network: string;
  private readonly dir: string;
  /** Services in the order they were started, and the ms each took to be ready. */
  readonly started: { service: string; readyMs: number }[] = [];

  constructor(readonly o: StackOptions) {
    this.dir = dirname(o.file);
    this.services = (parse(interpolate(readFileSync(o.file, 'utf8')), { merge: true }) as { services: Record<string, Service> }).services;
    this.network = `${o.project}_default`;
  }

  container(service: string): string {
    return `${this.o.project}-${service}`;
  }

  /** Dependencies first (depends_on), in the file's order otherwise. */
  order(): string[] {
    const done: string[] = [];
    const visit = (name: string) => {
      if (done.includes(name)) return;
      for (const dep of Object.keys(this.services[name]!.depends_on ?? {})) visit(dep);
      done.push(name);
    };
    for (const name of Object.keys(this.services)) visit(name);
    return done;
  }

  runArgs(service: string): string[] {
    const s = this.services[service]!;
    const args = ['run', '-d', ...RUN_FLAGS, '--name', this.container(service), '--network', this.network, '--network-alias', service];
    for (const [k, v] of Object.entries({ ...s.environment, ...this.o.extraEnv?.[service] })) args.push('-e', `${k}=${v}`);
    for (const v of s.volumes ?? []) {
      const [source, target, mode] = v.split(':');
      const host = source!.startsWith('.') || isAbsolute(source!) ? resolve(this.dir, source!) : `${this.o.project}_${source}`;
      args.push('-v', [host, target, mode].filter(Boolean).join(':'));
    }
    for (const p of s.ports ?? []) {
      const [hostPort, containerPort] = p.split(':');
      args.push('-p', `127.0.0.1:${this.o.hostPorts?.[containerPort!] ?? hostPort}:${containerPort}`);
    }
    if (s.restart) args.push('--restart', s.restart === 'unless-stopped' || s.restart === 'always' ? s.restart : 'no');
    if (s.stop_grace_period) args.push('--stop-timeout', String(parseInt(s.stop_grace_period, 10)));
    // The health check is run by waitHealthy, from the file (podman 4.3 would take an exec-form
    // test given on its command line as one shell word).
    if (s.healthcheck) args.push('--no-healthcheck');
    const image = this.o.images[service] ?? s.image;
    if (!image) throw new Error(`service ${service} has no image`);
    args.push(image, ...(s.command ?? []));
    return args;
  }

  /** The service's health check command, run once in its container: exit 0 is healthy. */
  async healthy(service: string): Promise<{ ok: boolean; output: string }> {
    const test = this.services[service]!.healthcheck!.test;
    const command = test[0] === 'CMD-SHELL' ? ['sh', '-c', test[1]!] : test.slice(1);
    const r = await podmanAsync(['exec', this.container(service), ...command], 30_000);
    return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
  }

  /**
   * Runs its health check until it passes, as Compose does for the condition service_healthy
   * (without systemd, podman has no timer to run health checks on).
   */
  async waitHealthy(service: string, limitMs = 120_000): Promise<void> {
    const until = Date.now() + limitMs;
    for (;;) {
      const r = await this.healthy(service);
      if (r.ok) return;
      if ((await podmanAsync(['inspect', '--format', '{{.State.Running}}', this.container(service)])).stdout !== 'true') {
        throw new Error(`${service} stopped before it was healthy:\n${this.logs(service)}`);
      }
      if (Date.now() > until) throw new Error(`${service} not healthy within ${limitMs} ms (${r.output}):\n${this.logs(service)}`);
      await sleep(250);
    }
  }

  /** The condition service_completed_successfully: it exits, with status 0. */
  waitCompleted(service: string): void {
    const code = podmanOk(['wait', this.container(service)], 300_000);
    if (code !== '0') throw new Error(`${service} exited ${code}:\n${this.logs(service)}`);
  }

  logs(service: string): string {
    const r = podman(['logs', this.container(service)]);
    return `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-40).join('\n');
  }

  /** `compose up -d`: each service after its dependencies meet their conditions. */
  async up(): Promise<void> {
    podman(['network', 'create', this.network]);
    const waits = new Map<string, Promise<void>>();
    for (const service of this.order()) {
      waits.set(
        service,
        (async () => {
          const deps = this.services[service]!.depends_on ?? {};
          await Promise.all(
            Object.entries(deps).map(async ([dep, { condition }]) => {
              await waits.get(dep);
              if (condition === 'service_healthy') await this.waitHealthy(dep);
              if (condition === 'service_completed_successfully') this.waitCompleted(dep);
            }),
          );
          const t0 = performance.now();
          podmanOk(this.runArgs(service));
          if (this.services[service]!.healthcheck) await this.waitHealthy(service);
          this.started.push({ service, readyMs: Math.round(performance.now() - t0) });
        })(),
      );
    }
    await Promise.all(waits.values());
  }

  /** `compose down -v`: containers, the network and the named volumes. */
  down(): void {
    for (const service of this.order().reverse()) podman(['rm', '-f', '-v', '-t', '5', this.container(service)], 60_000);
    podman(['network', 'rm', '-f', this.network]);
    for (const volume of podman(['volume', 'ls', '-q']).stdout.split('\n')) if (volume.startsWith(`${this.o.project}_`)) podman(['volume', 'rm', '-f', volume]);
  }

  /** The service's address on the stack's network (the host reaches it on a rootful podman network). */
  address(service: string): string {
    return podmanOk(['inspect', '--format', `{{(index .NetworkSettings.Networks "${this.network}").IPAddress}}`, this.container(service)]);
  }

  gateway(): string {
    return podmanOk(['network', 'inspect', '--format', '{{range .Subnets}}{{.Gateway}}{{end}}', this.network]);
  }
}
