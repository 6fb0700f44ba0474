// railyard replay: runs a scenario file's script in an isolated, in-process sandbox on a virtual
// clock and checks its expectations.
//
// Each run gets its own sandbox: an in-memory store, a virtual clock, ids seeded by the replay
// seed (--seed, else `replay.seed`, else 1), and only THIS file's rules and wallets: a script
// never sees the rules of other scenario files (nor scenarios/sandbox.yaml, unless it is the
// file being replayed), so a script and the rules it relies on travel together.
//
// Determinism: the same file and seed give a byte-identical timeline and report, ids included.
// Times are business time relative to the virtual start; nothing real-time (latency, wall-clock
// timestamps, ports, secrets) goes into the timeline or the result. Wall-clock time is used only
// where a party checks it against its own clock: request signatures (X-Service-Timestamp).
//
// Steps run in order, each by its own module in steps/ (request, advance, expect_webhook,
// expect_ledger, expect_provider_calls); the first failing step ends the script.

import { readFileSync } from 'node:fs';
import { displayPath } from '../kernel/display-path.ts';
import { VIRTUAL_EPOCH } from '../kernel/clock.ts';
import { RecordingTimeline } from '../kernel/timeline.ts';
import { YamlSourceError } from '../kernel/yaml-source.ts';
import type { ScenarioFile } from '../scenarios/scenario-schema.ts';
import { formatOffset } from './replay-report.ts';
import type { ReplayResult } from './replay-result.ts';
import { ScenarioSession } from './scenario-session.ts';
import type { ScenarioSource } from './scenario-source.ts';
import { stepKind, stepLabel } from './step-label.ts';
import { parseScenario } from '../railyard-scenarios.ts';

export interface RunOptions {
  /** Overrides the file's `replay.seed` (default 1). */
  seed?: number;
  /** Real-time limit for the whole script (default 60 s); a run over it fails. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Runs one scenario file's script in a fresh in-process sandbox and checks its expectations. The
 * script stops at the first failing step (later steps usually depend on it). Never throws for a
 * problem in the file or the run: it is in the result. Always closes what it started.
 */
export async function runScenario(file: ScenarioSource, options: RunOptions = {}): Promise<ReplayResult> {
  const { scenario } = file;
  const seed = options.seed ?? scenario.replay?.seed ?? 1;
  const steps = scenario.script ?? [];
  const result: ReplayResult = {
    file: file.path,
    name: scenario.name,
    status: 'passed',
    passed: true,
    seed,
    steps: [],
    timeline: [],
    failures: [],
    notRun: 0,
  };
  const fail = (index: number | null, label: string, msg: string) => {
    result.failures.push({ index, label, message: msg });
    result.status = 'failed';
    result.passed = false;
  };

  let start = VIRTUAL_EPOCH;
  let session: ScenarioSession | undefined;
  const timeline = new RecordingTimeline({ kind: 'virtual', now: () => session?.ry.clock.now() ?? start });
  let cancelled = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const current: { step: { index: number; label: string } | null } = { step: null };

  try {
    try {
      session = await ScenarioSession.open(file, { seed }, timeline);
    } catch (err) {
      if (err instanceof YamlSourceError) {
        fail(null, 'replay.config', message(err));
        result.notRun = steps.length;
        return result;
      }
      throw err;
    }
    start = session.start;
    const ry = session.ry;
    const offset = () => formatOffset(ry!.clock.now() - start);
    running = (async () => {
      for (const [i, step] of steps.entries()) {
        if (cancelled) return;
        const index = i + 1;
        const label = stepLabel(step, index);
        current.step = { index, label };
        const kind = stepKind(step);
        const checks = kind !== 'advance' && (kind !== 'request' || ('expect' in step && step.expect !== undefined));
        let error: string | undefined;
        try {
          await session.runStep(index);
        } catch (err) {
          error = message(err);
        }
        if (cancelled) return;
        result.steps.push({ index, label, kind, checks, passed: error === undefined, ...(error !== undefined ? { error } : {}), at: offset(), entries: timeline.entries.length });
        if (error !== undefined) {
          fail(index, label, error);
          result.notRun = steps.length - index;
          return;
        }
      }
      current.step = null;
    })();
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const outcome = await Promise.race([
      running.then(() => 'done' as const),
      new Promise<'timeout'>((done) => {
        timer = setTimeout(() => done('timeout'), timeoutMs);
      }),
    ]);
    if (outcome === 'timeout') {
      cancelled = true;
      const at = current.step;
      fail(at?.index ?? null, at?.label ?? 'script', `the script took longer than ${timeoutMs} ms of real time`);
      result.notRun = at ? steps.length - at.index : 0;
    }
  } catch (err) {
    fail(current.step?.index ?? null, current.step?.label ?? 'setup', `could not run the script: ${message(err)}`);
  } finally {
    clearTimeout(timer);
    if (running && cancelled) await Promise.race([running.catch(() => undefined), new Promise((done) => setTimeout(done, 2_000).unref())]);
    if (session) await session.close();
  }

  result.timeline = timeline.entries.map((e) => {
    const ms = Date.parse(e.at) - start;
    return { at: formatOffset(ms), ms, from: e.from, to: e.to, what: e.what };
  });
  return result;
}

/**
 * Loads one scenario file and replays its script: `invalid` when the file does not load (each
 * problem as file:line:column), `skipped` when it has no script.
 */
export async function replayFile(path: string, options: RunOptions & { cwd?: string } = {}): Promise<ReplayResult> {
  const shown = displayPath(path, options.cwd);
  const invalid = (problems: string[], name: string | null = null): ReplayResult => ({
    file: shown,
    name,
    status: 'invalid',
    passed: false,
    seed: null,
    steps: [],
    timeline: [],
    failures: problems.map((p) => ({ index: null, label: 'invalid scenario file', message: p })),
    notRun: 0,
  });
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return invalid([`${shown}: cannot read the file: ${message(err)}`]);
  }
  let scenario: ScenarioFile;
  try {
    scenario = parseScenario(text, shown);
  } catch (err) {
    if (err instanceof YamlSourceError) return invalid(err.problems);
    return invalid([`${shown}: ${message(err)}`]);
  }
  if (!scenario.script) {
    return { file: shown, name: scenario.name, status: 'skipped', passed: true, seed: null, steps: [], timeline: [], failures: [], notRun: 0 };
  }
  return runScenario({ path: shown, scenario, text }, options);
}
