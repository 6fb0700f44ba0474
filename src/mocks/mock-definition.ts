import type { Router } from 'express';
import type { MockContext } from './engine/mock-context.ts';

/** One credential a mock accepts, and where a client presents it. */
export interface MockCredential {
  /** What it is, e.g. "collection subscription key". */
  name: string;
  /** Where it goes, e.g. "Ocp-Apim-Subscription-Key header on /collection/*". */
  where: string;
  value: string;
  /** A secret (a key, a password) rather than an identifier. */
  secret: boolean;
}

/** What a client of a mock needs to know that is not in the upstream's own documentation. */
export interface MockAccess {
  credentials: MockCredential[];
  /** Provisioning steps, host prefixes, signing rules, test numbers. */
  notes: string[];
}

/**
 * A provider mock as its provider knows it: its name (the scenarios' `provider` and its mount
 * point /mocks/<name>), how to build it from the provider's config block (`providers.<name>`),
 * and what it tells its users.
 */
export interface MockDefinition<Options = any> {
  name: string;
  create(ctx: MockContext, options: Options): Router;
  access(options: Options): MockAccess;
  /** What `--as-real-sandbox` makes it refuse, one line each; absent: the mock has no such mode. */
  realSandbox?: readonly string[];
}

/**
 * A mock definition from its parts: which credentials it takes from its provider's config block,
 * its factory, and what it tells its users about them.
 */
export function defineMock<Options, Credentials>(parts: {
  name: string;
  credentials(options: Options): Credentials;
  create(ctx: MockContext, credentials: Credentials): Router;
  access(credentials: Credentials): MockAccess;
  realSandbox?: readonly string[];
}): MockDefinition<Options> {
  return {
    name: parts.name,
    ...(parts.realSandbox ? { realSandbox: parts.realSandbox } : {}),
    create: (ctx, options) => parts.create(ctx, parts.credentials(options)),
    access: (options) => parts.access(parts.credentials(options)),
  };
}

/** A mock's access as the banner and GET /api/v1/sandbox/providers show it. */
export interface MockAccessView {
  provider: string;
  base_url: string;
  credentials: { name: string; where: string; value: string | null }[];
  notes: string[];
}

/** The path every in-process mock is mounted under. */
export function mockPath(name: string): string {
  return `/mocks/${name}`;
}

/**
 * The view of a mock served under `baseUrl`. When its adapter talks to a real upstream, the
 * configured keys are that upstream's, so their secret values are not shown.
 */
export function mockAccessView(name: string, access: MockAccess, options: { baseUrl: string; realUpstream: boolean }): MockAccessView {
  return {
    provider: name,
    base_url: `${options.baseUrl.replace(/\/+$/, '')}${mockPath(name)}`,
    credentials: access.credentials.map((c) => ({ name: c.name, where: c.where, value: c.secret && options.realUpstream ? null : c.value })),
    notes: [
      ...(options.realUpstream && access.credentials.some((c) => c.secret) ? ['Secret values are not shown: the adapter uses the same configured values against a real upstream.'] : []),
      ...access.notes,
    ],
  };
}

/** The banner's lines for the mocks: each one's base URL, what it accepts and where, then its notes. */
export function mockBannerLines(views: readonly MockAccessView[], indent = '  '): string[] {
  const lines: string[] = [];
  for (const view of views) {
    lines.push(`${indent}${view.provider.padEnd(16)} ${view.base_url}`);
    const pad = `${indent}${' '.repeat(17)}`;
    const shown = view.credentials.map((c) => ({ ...c, value: c.value ?? '(not shown)' }));
    const nameWidth = Math.max(0, ...shown.map((c) => c.name.length));
    const valueWidth = Math.max(0, ...shown.map((c) => c.value.length));
    for (const c of shown) lines.push(`${pad}${c.name.padEnd(nameWidth)}  ${c.value.padEnd(valueWidth)}  (${c.where})`);
    for (const note of view.notes) lines.push(`${pad}- ${note}`);
  }
  return lines;
}
