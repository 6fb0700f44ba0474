// Debian's Chromium (/usr/bin/chromium) driven by playwright-core, for the browser tests: no
// browser download is possible here, and without the networking flags Chromium stalls on a
// closed network. Each launch gets a fresh profile under a temp dir.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Where screenshots go: docs/img (which the docs show) with RAILYARD_UPDATE_DOCS_IMAGES=1, else test-results/, so a run leaves the checkout clean. */
export function screenshotDir(): string {
  const dir = resolve(import.meta.dirname, process.env.RAILYARD_UPDATE_DOCS_IMAGES === '1' ? '../../docs/img' : '../../test-results/screenshots');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export interface LaunchedChromium {
  browser: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(viewport: { width: number; height: number }): Promise<LaunchedChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'railyard-chromium-'));
  // playwright passes the profile as --user-data-dir.
  const browser = await chromium.launchPersistentContext(profile, { executablePath: '/usr/bin/chromium', args: ARGS, viewport });
  return {
    browser,
    close: async () => {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
