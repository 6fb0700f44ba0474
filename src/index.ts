// railyard as a library: the composition root and its listener, for embedding the sandbox in a
// process of your own. railyard/testing (docs/testing.md) and railyard/client are the usual doors.
export { createApp, VERSION, type AppOptions, type Railyard } from './app.ts';
export { ConfigError, type Config, type ConfigInput } from './config/config.ts';
export { buildConfig, loadConfig } from './railyard-config.ts';
export { listenRailyard, type ListeningRailyard } from './listen-railyard.ts';
export { loadScenarios } from './railyard-scenarios.ts';
