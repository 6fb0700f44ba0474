// The port through which the sandbox API runs a scenario file's script. replay/ (a driver) owns
// the implementation; app.ts takes it from main.ts as an option and hands it to the routes, so no
// building block or feature imports replay/.

/** A loaded scenario file that has a `script:` to replay. */
export interface ReplayableFile {
  /** As GET /api/v1/sandbox/scenarios names it: relative to the working directory inside it, else absolute. */
  file: string;
  name: string;
  description: string | null;
  steps: number;
}

export interface ReplayRun {
  file: string;
  name: string | null;
  /** passed / failed: the script ran; invalid: the file no longer loads. */
  status: 'passed' | 'failed' | 'skipped' | 'invalid';
  passed: boolean;
  seed: number | null;
  steps: { index: number; label: string; kind: string; checks: boolean; passed: boolean; error?: string; at: string }[];
  failures: { index: number | null; label: string; message: string }[];
  notRun: number;
  timeline: { at: string; from: string; to: string; what: string }[];
}

export interface ScenarioReplays {
  /** The loaded files with a script, in load order. */
  list(): ReplayableFile[];
  /**
   * The listed file that `file` names, in the listed form: that form itself, or any path to the
   * same file (relative to the working directory, or absolute); undefined when none.
   */
  find(file: string): string | undefined;
  /** Replays one of them in a fresh sandbox of its own; undefined when `file` names none of them. */
  run(file: string): Promise<ReplayRun | undefined>;
  /** The real-time limit of one run, ms. */
  readonly timeoutMs: number;
}

/** When no driver is wired (tests, embedding): nothing to replay. */
export const NO_REPLAYS: ScenarioReplays = { list: () => [], find: () => undefined, run: async () => undefined, timeoutMs: 0 };
