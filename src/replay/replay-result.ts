// What a replay of one scenario file produces: the runner fills it in, the report prints it.

import type { TimelineEntry } from '../kernel/timeline.ts';

/** A timeline entry, `at` relative to the virtual start (`+00:05.000`), `ms` the same in ms. */
export interface ReplayEntry extends TimelineEntry {
  ms: number;
}

export type StepKind = 'request' | 'advance' | 'expect_webhook' | 'expect_ledger' | 'expect_provider_calls';

export interface StepResult {
  /** 1-based, as in the labels: `step 3: …` is script[2] in the file. */
  index: number;
  label: string;
  kind: StepKind;
  /** True when the step checks something (a request with `expect`, an expect_* step). */
  checks: boolean;
  passed: boolean;
  /** Why it failed: what was expected against what was found, at the mismatching path. */
  error?: string;
  /** Business time when the step finished, relative to the start. */
  at: string;
  /** How many timeline entries existed when the step finished (where the report prints it). */
  entries: number;
}

export interface ReplayFailure {
  /** The step's 1-based index; null for a problem outside the steps (setup, an invalid file). */
  index: number | null;
  label: string;
  message: string;
}

export type ReplayStatus = 'passed' | 'failed' | 'skipped' | 'invalid';

export interface ReplayResult {
  file: string;
  name: string | null;
  /** passed / failed: the script ran; skipped: the file has no script; invalid: it does not load. */
  status: ReplayStatus;
  /** Nothing failed: status passed or skipped. */
  passed: boolean;
  seed: number | null;
  steps: StepResult[];
  timeline: ReplayEntry[];
  failures: ReplayFailure[];
  /** Steps after the first failure, which were not run. */
  notRun: number;
}
