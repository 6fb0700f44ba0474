import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { createApp, VERSION } from './app.ts';
import { ConfigError, loadConfig } from './config/config.ts';
import { jsonLogger, silentLogger } from './kernel/logger.ts';
import { YamlSourceError } from './kernel/yaml-source.ts';
import { loadScenarios } from './scenarios/scenario-loader.ts';

const USAGE = `railyard ${VERSION}

Usage:
  railyard serve            run the sandbox (default); configure with railyard.yaml and env (see README)
  railyard help             this text
`;

async function serve(): Promise<void> {
  const config = loadConfig();
  const scenarioPaths = config.scenarios.filter((p) => existsSync(resolve(p)) || p !== 'scenarios');
  const scenarios = loadScenarios(scenarioPaths);
  const logger = config.log_requests ? jsonLogger() : silentLogger;
  const railyard = await createApp(config, { logger, rules: scenarios.rules });
  const server = createServer(railyard.app);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(config.port, config.host, () => done());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  railyard.setBaseUrl(`http://127.0.0.1:${port}`);
  railyard.scheduler.start();

  const base = config.base_url ?? `http://localhost:${port}`;
  const lines = [
    '',
    `  railyard ${VERSION} is listening on ${base}`,
    '',
    `  sandbox key      ${railyard.sandbox.key}`,
    `  signing secret   ${railyard.sandbox.signingSecret}`,
    `  clock            ${config.clock}${config.clock === 'virtual' ? ' (POST /api/v1/sandbox/clock/advance moves it)' : ''}`,
    `  store            ${config.db}`,
    ...(config.webhooks.sandbox_url ? [`  webhooks         ${config.webhooks.sandbox_url} (secret ${railyard.sandbox.webhookSecret})`] : []),
    `  scenarios        ${scenarios.files.length ? scenarios.files.map((f) => `${f.scenario.name} (${f.path}, ${f.scenario.rules.length} rules)`).join('\n                   ') : 'none'}`,
    `  openapi          ${base}/openapi.json`,
    '',
    `  try: curl -s ${base}/api/v1/wallet -H "Authorization: Bearer ${railyard.sandbox.key}"`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`received ${signal}: finishing in-flight requests\n`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.close(async () => {
      await railyard.close();
      process.stdout.write('railyard stopped\n');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve'] = argv;
  switch (command) {
    case 'serve':
      return serve();
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return;
    default:
      process.stderr.write(`unknown command ${command}\n\n${USAGE}`);
      process.exitCode = 2;
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError || err instanceof YamlSourceError) {
    process.stderr.write(`railyard could not start:\n${err.message}\n`);
  } else {
    process.stderr.write(`railyard could not start: ${err instanceof Error ? err.message : String(err)}\n`);
  }
  process.exit(2);
});
