#!/usr/bin/env -S node --max-semi-space-size=16 --heap-growing-percent=100
// The node flag is the one `npm start` and the Dockerfile's CMD pass: see docs/configuration.md, Memory.
// Runs the compiled CLI (npm run build, which npm ci runs too); without a build, the TypeScript
// sources through tsx.
import { existsSync } from 'node:fs';

// `npx railyard` (and any npm script) runs this through `sh -c`, and npm forwards SIGTERM and
// SIGINT to that shell, which dies of them without passing them on: railyard would keep running,
// orphaned, and keep its port. So under npm, the parent going away is the signal to stop, and
// railyard stops as if sent SIGTERM (serve drains first).
if (process.env.npm_command !== undefined) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 200);
  watch.unref();
}

const compiled = new URL('../dist/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
