// How `railyard replay` and `railyard contracts verify` report to a CI system: one model of a test
// run (suites of test cases), written as JUnit XML (`--reporter junit`) or as one JSON document
// (`--reporter json`, documented in docs/contracts.md#reporters-for-ci). Each command turns its own
// results into the model; this module knows nothing of scenarios or pacts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export const REPORTERS = ['default', 'junit', 'json'] as const;
export type ReporterName = (typeof REPORTERS)[number];

export type TestStatus = 'passed' | 'failed' | 'error' | 'skipped';

export interface TestCase {
  name: string;
  /** JUnit's classname: what the case belongs to (a folder, a pact). */
  classname: string;
  /** passed; failed: an expectation did not hold; error: it could not run; skipped. */
  status: TestStatus;
  /** One line: why it failed, errored or was skipped. */
  message?: string;
  /** The whole story: each difference or mismatch. */
  details?: string;
  /** Real seconds, when measured. */
  time?: number;
}

export interface TestSuite {
  name: string;
  /** The file the suite comes from. */
  file?: string;
  cases: TestCase[];
  /** Real seconds, when measured. */
  time?: number;
}

export interface TestRun {
  /** The command: `railyard replay`, `railyard contracts verify`. */
  name: string;
  suites: TestSuite[];
  /** Real seconds the whole run took. */
  time?: number;
}

export interface TestSummary {
  total: number;
  passed: number;
  /** Failed and errored cases. */
  failed: number;
  skipped: number;
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

function counts(cases: readonly TestCase[]): Counts {
  return {
    tests: cases.length,
    failures: cases.filter((c) => c.status === 'failed').length,
    errors: cases.filter((c) => c.status === 'error').length,
    skipped: cases.filter((c) => c.status === 'skipped').length,
  };
}

export function summariseRun(run: TestRun): TestSummary {
  const c = counts(run.suites.flatMap((s) => s.cases));
  return { total: c.tests, passed: c.tests - c.failures - c.errors - c.skipped, failed: c.failures + c.errors, skipped: c.skipped };
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g');
// Characters XML 1.0 cannot hold at all, even escaped (control characters but tab, LF, CR).
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Text made safe for an XML attribute or element: entities escaped, ANSI codes and characters XML forbids removed. */
export function xmlEscape(text: string): string {
  return text.replace(ANSI, '').replace(NOT_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const seconds = (time: number | undefined) => (time === undefined ? '' : ` time="${time.toFixed(3)}"`);
const countAttributes = (c: Counts) => `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}"`;

function caseXml(c: TestCase): string {
  const open = `    <testcase name="${xmlEscape(c.name)}" classname="${xmlEscape(c.classname)}"${seconds(c.time)}`;
  if (c.status === 'passed') return `${open}/>`;
  const tag = c.status === 'failed' ? 'failure' : c.status === 'error' ? 'error' : 'skipped';
  const message = c.message !== undefined ? ` message="${xmlEscape(c.message)}"` : '';
  const type = c.status === 'skipped' ? '' : ` type="${c.status === 'failed' ? 'AssertionError' : 'Error'}"`;
  const body = c.details ? `>${xmlEscape(c.details)}</${tag}>` : '/>';
  return `${open}>\n      <${tag}${message}${type}${body}\n    </testcase>`;
}

/** JUnit XML: testsuites > testsuite > testcase, with failure, error or skipped children. */
export function junitXml(run: TestRun): string {
  const lines = ['<?xml version="1.0" encoding="UTF-8"?>'];
  lines.push(`<testsuites name="${xmlEscape(run.name)}" ${countAttributes(counts(run.suites.flatMap((s) => s.cases)))}${seconds(run.time)}>`);
  for (const suite of run.suites) {
    const file = suite.file !== undefined ? ` file="${xmlEscape(suite.file)}"` : '';
    const attributes = `name="${xmlEscape(suite.name)}" ${countAttributes(counts(suite.cases))}${seconds(suite.time)}${file}`;
    if (suite.cases.length === 0) {
      lines.push(`  <testsuite ${attributes}/>`);
      continue;
    }
    lines.push(`  <testsuite ${attributes}>`, ...suite.cases.map(caseXml), '  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

export interface JsonSuite {
  name: string;
  file: string | null;
  tests: { name: string; classname: string; status: TestStatus; message: string | null; details: string | null }[];
}

/**
 * The JSON reporter's document: the summary, the suites and their tests (no timings, so the same
 * run prints the same bytes), then the command's own detail under its own key.
 */
export function jsonDocument(run: TestRun, detail: Record<string, unknown>): string {
  const suites: JsonSuite[] = run.suites.map((s) => ({
    name: s.name,
    file: s.file ?? null,
    tests: s.cases.map((c) => ({ name: c.name, classname: c.classname, status: c.status, message: c.message ?? null, details: c.details ?? null })),
  }));
  return `${JSON.stringify({ summary: summariseRun(run), suites, ...detail }, null, 2)}\n`;
}

/** Writes a --output report, making its folders first: a pipeline names reports/x.xml in a fresh checkout. */
export function writeReportFile(path: string, document: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, document);
}
