// deploy/base-images.sh stands in for the images the Dockerfile and deploy/compose.yaml name when
// the registry cannot be reached (docs/deployment.md, "Run with Docker or podman"): it must name
// the same images, and its Containerfiles pass the same linter as the Dockerfile.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const script = read('deploy/base-images.sh');
const compose = parse(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, { image?: string }> };

describe('deploy/base-images.sh', () => {
  it('provides the images the Dockerfile and compose.yaml name: node:24-slim, postgres:15, nginx', () => {
    const nodeImage = /^ARG NODE_IMAGE=(\S+)$/m.exec(read('Dockerfile'))?.[1];
    for (const image of [nodeImage, compose.services.postgres!.image, compose.services.lb!.image]) {
      expect(script).toContain(`registry_image ${image})`);
    }
  });

  it('builds each stand-in from a Containerfile that lints clean', () => {
    for (const name of ['node', 'postgres', 'nginx']) {
      const file = `deploy/stand-ins/${name}.Containerfile`;
      const diagnostics = lintDockerfile(read(file)).map((d) => `${file}:${d.range.start.line + 1}: ${d.message}`);
      expect(diagnostics).toEqual([]);
    }
  });

  it('gives the node stand-in what the Dockerfile relies on: npm, a node user with uid 1000', () => {
    const node = read('deploy/stand-ins/node.Containerfile');
    expect(node).toMatch(/useradd --uid 1000 --gid node/);
    expect(node).toContain('/usr/local/bin/npm');
    expect(read('Dockerfile')).toMatch(/^USER node$/m);
  });

  it("gives the postgres stand-in the official image's variables that compose.yaml sets", () => {
    const entrypoint = read('deploy/stand-ins/postgres-entrypoint.sh');
    for (const variable of Object.keys((compose.services.postgres as { environment: Record<string, string> }).environment)) {
      expect(entrypoint).toContain(variable);
    }
  });
});
