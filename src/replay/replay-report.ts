// How `railyard replay` prints its results: a readable timeline per file, with each checking
// step's ✓ or ✗ (and its difference) where it ran, then per-file PASS/FAIL lines and the summary
// `N passed, M failed`. With --json, one JSON document instead. Nothing real-time is printed, so
// the same files and seed print the same bytes.

import type { ReplayEntry, ReplayResult } from './replay-result.ts';

const pad2 = (n: number) => String(n).padStart(2, '0');

/** Business time since the virtual start: `+00:05.150`, or `+1:00:05.150` from an hour on. */
export function formatOffset(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  const milli = String(total % 1000).padStart(3, '0');
  const s = Math.floor(total / 1000) % 60;
  const m = Math.floor(total / 60_000) % 60;
  const h = Math.floor(total / 3_600_000);
  return h > 0 ? `+${h}:${pad2(m)}:${pad2(s)}.${milli}` : `+${pad2(m)}:${pad2(s)}.${milli}`;
}

interface Widths {
  at: number;
  from: number;
  to: number;
}

function widths(entries: readonly ReplayEntry[]): Widths {
  return {
    at: Math.max(0, ...entries.map((e) => e.at.length)),
    from: Math.max(0, ...entries.map((e) => e.from.length)),
    to: Math.max(0, ...entries.map((e) => e.to.length)),
  };
}

/** `+00:05.000  hubtel   → railyard   callback chg_…: success -> settled`, arrows aligned. */
function entryLine(e: ReplayEntry, w: Widths): string {
  return `${e.at.padEnd(w.at)}  ${e.from.padEnd(w.from)} → ${e.to.padEnd(w.to)}   ${e.what}`;
}

/** The timeline alone, one line per entry, arrows aligned. */
export function formatTimeline(entries: readonly ReplayEntry[]): string[] {
  const w = widths(entries);
  return entries.map((e) => entryLine(e, w));
}

function indent(text: string, spaces: number): string {
  return text
    .split('\n')
    .map((l) => ' '.repeat(spaces) + l)
    .join('\n');
}

/** One file: a heading, the timeline with ✓/✗ lines where the steps ran, then PASS, FAIL or SKIP. */
export function formatResult(result: ReplayResult): string {
  const lines: string[] = [];
  const heading = result.name ? `${result.file}: ${result.name}` : result.file;
  if (result.status === 'skipped') {
    lines.push(`# ${heading}`, '  skipped (no script)');
    return `${lines.join('\n')}\n`;
  }
  if (result.status === 'invalid') {
    lines.push(`# ${heading}`, '  ✗ invalid scenario file');
    for (const f of result.failures) lines.push(indent(f.message, 6));
    lines.push(`FAIL ${result.file}`);
    return `${lines.join('\n')}\n`;
  }
  lines.push(`# ${heading} (seed ${result.seed})`);
  const w = widths(result.timeline);
  let printed = 0;
  const printUpTo = (n: number) => {
    for (; printed < n && printed < result.timeline.length; printed++) lines.push(entryLine(result.timeline[printed]!, w));
  };
  for (const step of result.steps) {
    printUpTo(step.entries);
    if (step.passed && step.checks) lines.push(`  ✓ ${step.label}`);
    else if (!step.passed) {
      lines.push(`  ✗ ${step.label}`);
      if (step.error) lines.push(indent(step.error, 6));
    }
  }
  printUpTo(result.timeline.length);
  for (const f of result.failures) {
    if (f.index !== null && result.steps.some((s) => s.index === f.index && !s.passed)) continue; // shown above
    lines.push(`  ✗ ${f.label}`, indent(f.message, 6));
  }
  if (result.notRun > 0) lines.push(`  … ${result.notRun} later step${result.notRun === 1 ? '' : 's'} not run`);
  lines.push(`${result.status === 'passed' ? 'PASS' : 'FAIL'} ${result.file}`);
  return `${lines.join('\n')}\n`;
}

export interface ReplaySummary {
  passed: number;
  failed: number;
  skipped: number;
  total: number;
}

/** Scripts that passed; files that failed (a failing script or an invalid file); files without a script. */
export function summarise(results: readonly ReplayResult[]): ReplaySummary {
  return {
    passed: results.filter((r) => r.status === 'passed').length,
    failed: results.filter((r) => r.status === 'failed' || r.status === 'invalid').length,
    skipped: results.filter((r) => r.status === 'skipped').length,
    total: results.length,
  };
}

/** The first failure of a file, in one line, for its FAIL line. */
function firstFailure(result: ReplayResult): string {
  const f = result.failures[0];
  if (!f) return '';
  if (result.status === 'invalid') return `invalid: ${f.message.split('\n')[0]}`;
  return f.label;
}

/** Per-file PASS/FAIL/SKIP lines, then `N passed, M failed` alone on the last line. */
export function formatSummary(results: readonly ReplayResult[]): string {
  const lines = results.map((r) => {
    if (r.status === 'passed') return `PASS  ${r.file}`;
    if (r.status === 'skipped') return `SKIP  ${r.file}  skipped (no script)`;
    return `FAIL  ${r.file}  ${firstFailure(r)}`;
  });
  const s = summarise(results);
  lines.push('');
  if (s.skipped) lines.push(`${s.skipped} skipped (no script)`);
  lines.push(`${s.passed} passed, ${s.failed} failed`);
  return `${lines.join('\n')}\n`;
}

/** Every file's block, then the summary: what `railyard replay` prints. */
export function formatReport(results: readonly ReplayResult[]): string {
  return results.map((r) => `${formatResult(r)}\n`).join('') + formatSummary(results);
}

export interface ReplayJsonReport {
  files: ReplayResult[];
  summary: ReplaySummary;
}

export function jsonReport(results: readonly ReplayResult[]): ReplayJsonReport {
  return { files: [...results], summary: summarise(results) };
}

/** `railyard replay --json`: one JSON document. */
export function formatJson(results: readonly ReplayResult[]): string {
  return `${JSON.stringify(jsonReport(results), null, 2)}\n`;
}
