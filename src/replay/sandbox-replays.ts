// The sandbox API's replays (POST /api/v1/sandbox/replays): a loaded scenario file's script run
// as `railyard replay <file>` runs it, in a fresh in-process sandbox with its own store and
// virtual clock, never the serving one.

import { resolve } from 'node:path';
import { displayPath } from '../kernel/display-path.ts';
import type { ScenarioFile } from '../scenarios/scenario-schema.ts';
import type { ReplayableFile, ReplayRun, ScenarioReplays } from '../sandbox/scenario-replays.ts';
import { replayFile } from './replay-runner.ts';

/** Short enough that the dashboard's API call (60 s) outlasts it. */
export const SANDBOX_REPLAY_TIMEOUT_MS = 30_000;

export class SandboxReplays implements ScenarioReplays {
  readonly timeoutMs: number;

  constructor(
    /** The scenario files in force now (main.ts updates them when the files are reloaded). */
    private readonly files: () => readonly { path: string; scenario: ScenarioFile }[],
    options: { timeoutMs?: number; cwd?: string } = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? SANDBOX_REPLAY_TIMEOUT_MS;
    this.cwd = options.cwd ?? process.cwd();
  }

  private readonly cwd: string;

  private shown(path: string): string {
    return displayPath(path, this.cwd);
  }

  find(file: string): string | undefined {
    const wanted = resolve(this.cwd, file);
    const found = this.files().find((f) => f.scenario.script !== undefined && (this.shown(f.path) === file || resolve(this.cwd, f.path) === wanted));
    return found && this.shown(found.path);
  }

  list(): ReplayableFile[] {
    return this.files()
      .filter((f) => f.scenario.script !== undefined)
      .map((f) => ({ file: this.shown(f.path), name: f.scenario.name, description: f.scenario.description ?? null, steps: f.scenario.script!.length }));
  }

  async run(file: string): Promise<ReplayRun | undefined> {
    const found = this.files().find((f) => f.scenario.script !== undefined && this.shown(f.path) === file);
    if (!found) return undefined;
    // Read again from disk, as the CLI does: an edit since the load is what runs.
    const result = await replayFile(found.path, { cwd: this.cwd, timeoutMs: this.timeoutMs });
    return { ...result, timeline: result.timeline.map(({ at, from, to, what }) => ({ at, from, to, what })) };
  }
}
