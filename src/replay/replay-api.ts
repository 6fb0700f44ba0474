// The replay as contracts/ use it: open a scenario's sandbox and run its steps one at a time, name
// the steps, match and interpolate as scripts do. contracts/ import nothing else from replay/;
// the CLI drives replay-runner.ts and replay-report.ts.

export { ScenarioSession, type SessionOptions } from './scenario-session.ts';
export type { ScenarioSource } from './scenario-source.ts';
export type { RecordedExchange } from './run-context.ts';
export { stepLabel } from './step-label.ts';
export { findRoute } from './sandbox-request.ts';
export { interpolate, partialMatch } from './partial-match.ts';
export { closeServer, listen } from './local-server.ts';
export { replayConfig } from './replay-config.ts';
