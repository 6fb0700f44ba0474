#!/usr/bin/env node
// Runs the compiled CLI (npm run build, which npm ci runs too); without a build, the TypeScript
// sources through tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
