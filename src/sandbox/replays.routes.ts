import { z } from 'zod';
import { ok, envelopeOf } from '../http/envelope.ts';
import { defineRoute, type RouteSpec } from '../http/route.ts';
import { NotFoundError, RateLimitedError, ReplayFailedError } from '../kernel/errors.ts';
import type { ScenarioReplays } from './scenario-replays.ts';

const replayableSchema = z.object({
  file: z.string().describe('The scenario file, relative to the working directory: pass it as `file` to run it'),
  name: z.string(),
  description: z.string().nullable(),
  steps: z.number().int().describe('Steps in its script'),
});

const replaySchema = z.object({
  file: z.string(),
  name: z.string().nullable(),
  status: z.enum(['passed', 'failed', 'skipped', 'invalid']).describe('passed or failed: the script ran; invalid: the file no longer loads'),
  passed: z.boolean(),
  seed: z.number().int().nullable(),
  steps: z.array(
    z.object({
      index: z.number().int().describe('1-based, as in the labels'),
      label: z.string(),
      kind: z.string(),
      checks: z.boolean().describe('The step checks something (a request with expect, an expect_* step)'),
      passed: z.boolean(),
      error: z.string().nullable().describe('Why it failed: what was expected against what was found'),
      at: z.string().describe('Business time when the step finished, relative to the start (+mm:ss.mmm)'),
    }),
  ),
  failures: z.array(z.object({ index: z.number().int().nullable(), label: z.string(), message: z.string() })),
  not_run: z.number().int().describe('Steps after the first failure, which were not run'),
  timeline: z.array(z.object({ at: z.string().describe('Relative to the start'), from: z.string(), to: z.string(), what: z.string() })),
});

/** GET and POST /api/v1/sandbox/replays: the scripted scenario files, and running one. */
export function replayRoutes(deps: { replays: ScenarioReplays }): RouteSpec[] {
  // One replay at a time per process: each opens a whole sandbox of its own.
  let running: string | null = null;
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/sandbox/replays',
      operationId: 'sandboxListReplays',
      summary: 'The loaded scenario files that have a script to replay',
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      response: { status: 200, description: 'The files in load order', schema: envelopeOf(z.array(replayableSchema)) },
      errors: ['forbidden'],
      handler: async () => ({ status: 200, body: ok('Replays', deps.replays.list()) }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/sandbox/replays',
      operationId: 'sandboxRunReplay',
      summary: "Run a scenario file's script, as `railyard replay <file>` does",
      description:
        "Test keys only. The script runs in a fresh in-process sandbox with its own store and virtual clock (the file's own rules, wallets and replay settings), never in this one: nothing here changes. It stops at the first failing step. A script that passed answers 200 with the report as data; one that failed (or a file that no longer loads) answers 422 replay_failed with the same report as error.details, so `curl -f` fails on it. One replay runs at a time (another answers 429 rate_limited), within a real-time limit (a run over it fails, naming the step it was on).",
      tag: 'Sandbox',
      area: 'engineering',
      sandboxOnly: true,
      body: z.strictObject({
        file: z.string({ error: 'file is required' }).min(1, 'file is required').max(500).describe('A file as GET /api/v1/sandbox/replays (or /scenarios) shows it, or any path to the same file'),
      }),
      response: { status: 200, description: 'The script passed: what the replay did', schema: envelopeOf(replaySchema) },
      errors: ['forbidden', 'not_found', 'replay_failed', 'rate_limited'],
      handler: async ({ body }) => {
        // The file as listed, or any path to the same file (the listed form is canonical).
        const file = deps.replays.find(body.file);
        if (file === undefined) {
          throw new NotFoundError(`No loaded scenario file ${body.file} has a script to replay`, { file: body.file });
        }
        if (running !== null) throw new RateLimitedError(`A replay of ${running} is running; one runs at a time. Retry when it finishes.`, { running });
        running = file;
        try {
          const run = await deps.replays.run(file);
          if (!run) throw new NotFoundError(`No loaded scenario file ${body.file} has a script to replay`, { file: body.file });
          const report = {
            file: run.file,
            name: run.name,
            status: run.status,
            passed: run.passed,
            seed: run.seed,
            steps: run.steps.map((s) => ({ index: s.index, label: s.label, kind: s.kind, checks: s.checks, passed: s.passed, error: s.error ?? null, at: s.at })),
            failures: run.failures,
            not_run: run.notRun,
            timeline: run.timeline,
          };
          // A failed run is an error answer, so a CI step (`curl -f`) can gate on the status alone.
          if (!run.passed) {
            const failure = run.failures[0];
            throw new ReplayFailedError(
              run.status === 'invalid' ? `The replay of ${run.file} could not load the file` : `The replay of ${run.file} failed${failure ? ` at ${failure.label}` : ''}`,
              report,
            );
          }
          return { status: 200, body: ok(`The replay of ${run.file} passed`, report) };
        } finally {
          running = null;
        }
      },
    }),
  ];
}
