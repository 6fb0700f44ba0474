import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { createApp, VERSION } from './app.ts';
import { jobThreadRunner } from './start-job-thread.ts';
import { listenRailyard } from './listen-railyard.ts';
import { describeStore, isPostgresUrl } from './store/open-store.ts';
import { WriteTurn } from './store/write-turn.ts';
import { ConfigError } from './config/config.ts';
import { displayPath } from './kernel/display-path.ts';
import { jsonLogger, silentLogger } from './kernel/logger.ts';
import { YamlSourceError } from './kernel/yaml-source.ts';
import { mockBannerLines } from './mocks/mock-definition.ts';
import { PROVIDERS } from './providers/index.ts';
import { usage } from './cli/usage.ts';
import { ruleSources } from './scenarios/scenario-loader.ts';
import { formatLintProblem, type LintProblem } from './scenarios/scenario-lint.ts';
import { watchScenarios } from './scenarios/scenario-watcher.ts';
import { SandboxReplays } from './replay/sandbox-replays.ts';
import { loadConfig } from './railyard-config.ts';
import { loadScenarios, SCENARIO_SCHEMA } from './railyard-scenarios.ts';

const USAGE = usage(VERSION, PROVIDERS);

/** Runs parseArgs; its complaints (unknown or malformed options) are usage errors: exit 2. */
function parseOrExit<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    process.stderr.write(`railyard ${command}: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function listen(args: string[]): Promise<void> {
  const { values } = parseOrExit('listen', () =>
    parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        'forward-to': { type: 'string', short: 'f' },
        api: { type: 'string' },
        key: { type: 'string' },
        events: { type: 'string', short: 'e' },
        'print-secret': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (values.help) return void process.stdout.write(USAGE);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { runListen } = await import('./cli/listen-command.ts');
  const code = await runListen(
    {
      forwardTo: values['forward-to'],
      api: values.api,
      key: values.key,
      events: values.events,
      printSecret: values['print-secret'] === true,
    },
    { stdout: process.stdout, stderr: process.stderr, signal: controller.signal },
  );
  process.exit(code);
}

async function trigger(args: string[]): Promise<void> {
  const { values, positionals } = parseOrExit('trigger', () =>
    parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        api: { type: 'string' },
        key: { type: 'string' },
        secret: { type: 'string' },
        'review-address': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (values.help) return void process.stdout.write(USAGE);
  if (positionals.length > 1) {
    process.stderr.write(`railyard trigger: one event type at a time (got ${positionals.join(' ')})\n`);
    process.exit(2);
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const { runTrigger } = await import('./cli/trigger-command.ts');
  const code = await runTrigger(
    positionals[0] ?? '',
    {
      api: values.api,
      key: values.key,
      secret: values.secret,
      reviewAddress: values['review-address'],
    },
    { stdout: process.stdout, stderr: process.stderr, signal: controller.signal },
  );
  process.exit(code);
}

async function replay(args: string[]): Promise<void> {
  const { values, positionals } = parseOrExit('replay', () =>
    parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        reporter: { type: 'string' },
        output: { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (values.help) return void process.stdout.write(USAGE);
  const { parseSeed, runReplay } = await import('./cli/replay-command.ts');
  const seed = parseSeed(values.seed);
  if (typeof seed === 'string') {
    process.stderr.write(`railyard replay: ${seed}\n`);
    process.exit(2);
  }
  const reporter = await reporterOption('replay', values.reporter, values.json === true, values.output);
  const code = await runReplay(positionals, { ...reporter, ...(seed !== undefined ? { seed } : {}) }, { stdout: process.stdout, stderr: process.stderr });
  process.exit(code);
}

/** --reporter (with --json, its old alias) and --output, checked; a bad combination exits 2. */
async function reporterOption(command: string, reporter: string | undefined, json: boolean, output: string | undefined) {
  const { REPORTERS } = await import('./cli/test-reporter.ts');
  const fail = (problem: string) => {
    process.stderr.write(`railyard ${command}: ${problem}\n`);
    process.exit(2);
  };
  if (reporter !== undefined && !(REPORTERS as readonly string[]).includes(reporter)) fail(`--reporter is one of ${REPORTERS.join(', ')}, not ${JSON.stringify(reporter)}`);
  if (json && reporter !== undefined && reporter !== 'json') fail(`--json is --reporter json; it cannot go with --reporter ${reporter}`);
  const name = (json ? 'json' : (reporter ?? 'default')) as (typeof REPORTERS)[number];
  if (output !== undefined && name === 'default') fail('--output takes the junit or json report: add --reporter junit or --reporter json');
  return { reporter: name, ...(output !== undefined ? { output } : {}) };
}

const LOG_LEVELS = ['error', 'warn', 'info', 'debug', 'trace'] as const;

/** A contracts subcommand's options, with the --dir and --help both take. */
function parseContractsArgs<T extends ParseArgsOptionsConfig>(sub: string, args: string[], options: T) {
  return parseOrExit(`contracts ${sub}`, () =>
    parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: { dir: { type: 'string', default: 'contracts' }, help: { type: 'boolean', short: 'h' }, ...options } as const,
    }),
  );
}

async function contracts(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'generate' && sub !== 'verify') {
    process.stderr.write(`railyard contracts: say generate or verify${sub ? `, not ${JSON.stringify(sub)}` : ''}\n\n${USAGE}`);
    process.exit(2);
  }
  const io = { stdout: process.stdout, stderr: process.stderr };
  // Loaded only for these commands: pact-js is heavy, and serve never needs it.
  const { runGenerate, runVerify } = await import('./cli/contracts-command.ts');
  if (sub === 'generate') {
    const { values } = parseContractsArgs('generate', rest, {
      scenarios: { type: 'string', multiple: true },
      check: { type: 'boolean' },
    });
    if (values.help) return void process.stdout.write(USAGE);
    process.exit(await runGenerate({ dir: values.dir, ...(values.scenarios ? { scenarios: values.scenarios } : {}), check: values.check === true }, io));
  }
  const { values } = parseContractsArgs('verify', rest, {
    provider: { type: 'string', multiple: true },
    'provider-base-url': { type: 'string' },
    key: { type: 'string' },
    secret: { type: 'string' },
    'log-level': { type: 'string', default: 'error' },
    reporter: { type: 'string' },
    output: { type: 'string' },
  });
  if (values.help) return void process.stdout.write(USAGE);
  const reporter = await reporterOption('contracts verify', values.reporter, false, values.output);
  const dir = values.dir;
  const level = values['log-level'];
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    process.stderr.write(`railyard contracts verify: --log-level is one of ${LOG_LEVELS.join(', ')}, not ${JSON.stringify(level)}\n`);
    process.exit(2);
  }
  const baseUrl = values['provider-base-url'];
  if (baseUrl !== undefined && !/^https?:\/\/[^/]+/.test(baseUrl)) {
    process.stderr.write(`railyard contracts verify: --provider-base-url must be an http(s) URL, not ${JSON.stringify(baseUrl)}\n`);
    process.exit(2);
  }
  const key = values.key ?? process.env.RAILYARD_KEY;
  const secret = values.secret ?? process.env.RAILYARD_SIGNING_SECRET;
  const providers = values.provider;
  process.exit(
    await runVerify(
      {
        dir,
        logLevel: level as (typeof LOG_LEVELS)[number],
        ...reporter,
        ...(providers ? { providers } : {}),
        ...(baseUrl ? { providerBaseUrl: baseUrl } : {}),
        ...(key ? { apiKey: key } : {}),
        ...(secret ? { signingSecret: secret } : {}),
      },
      io,
    ),
  );
}

/** What `railyard scenarios lint` says of the loaded files, as warnings: they load all the same. */
function reportScenarioProblems(files: readonly { problems: readonly LintProblem[] }[]): void {
  for (const p of files.flatMap((f) => f.problems)) process.stderr.write(`warning: ${formatLintProblem({ ...p, severity: 'warning' }).replace(': warning: ', ': ')}\n`);
}

async function serve(): Promise<void> {
  // A signal that comes while railyard starts (the job thread's start takes a moment after the
  // port opens) stops it as soon as it is serving, through the same drain.
  let stopping = false;
  let stopServing: (() => void) | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`received ${signal}: finishing in-flight requests\n`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    stopServing?.();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const config = loadConfig();
  const scenarioPaths = config.scenarios.filter((p) => existsSync(resolve(p)) || p !== 'scenarios');
  const scenarios = loadScenarios(scenarioPaths);
  reportScenarioProblems(scenarios.files);
  const logger = config.log_requests ? jsonLogger() : silentLogger;
  // The files in force, for the sandbox API's replays: the watcher below swaps them on a reload.
  let scenarioFiles = scenarios.files;
  const replays = new SandboxReplays(() => scenarioFiles);
  // On the system clock with a SQLite file the jobs run on a thread of their own (start-job-thread.ts).
  // On the virtual clock they stay here: an advance runs them inside its request, in order.
  const writeTurn = config.scheduler.thread && config.clock === 'system' && !isPostgresUrl(config.db) && config.db !== ':memory:' ? new WriteTurn() : undefined;
  const railyard = await createApp(config, {
    logger,
    rules: scenarios.rules,
    wallets: scenarios.wallets,
    apiRules: scenarios.apiRules,
    ruleSources: ruleSources(scenarios),
    replays,
    thread: writeTurn && { role: 'requests', writeTurn },
  });
  const jobs =
    writeTurn &&
    jobThreadRunner(railyard, writeTurn, (err) => {
      process.stderr.write(`railyard: ${err.message}; stopping\n`);
      process.exit(70);
    });
  const listening = await listenRailyard(railyard, { port: config.port, host: config.host, jobs });
  const { port } = listening;
  listening.recovery
    .then((n) => n && process.stdout.write(`recovered ${n} initiation(s) interrupted by the last stop\n`))
    .catch((err) => process.stderr.write(`recovery of interrupted initiations failed: ${err instanceof Error ? err.message : String(err)}\n`));
  // Edits to scenario files take effect at once; a broken edit is reported and the last good
  // rules stay in force.
  const watcher = watchScenarios(
    SCENARIO_SCHEMA,
    scenarioPaths,
    (loaded) => {
      railyard.scenarios.replace(loaded.rules, loaded.wallets, ruleSources(loaded));
      // On PostgreSQL the reload starts the api rules' counts afresh for the fleet, in the database.
      railyard.apiFaults.replace(loaded.apiRules).catch((err) => process.stderr.write(`restart of the api rules' counts failed: ${err instanceof Error ? err.message : String(err)}\n`));
      scenarioFiles = loaded.files;
      process.stdout.write(`scenarios reloaded: ${loaded.files.length} file(s), ${loaded.rules.length} rules\n`);
      reportScenarioProblems(loaded.files);
    },
    (message) => process.stderr.write(`scenarios not reloaded; keeping the last good version:\n${message}\n`),
  );

  const base = config.base_url ?? `http://localhost:${port}`;
  const lines = [
    '',
    `  railyard ${VERSION} is listening on ${base}`,
    '',
    `  sandbox key      ${railyard.sandbox.key}`,
    `  signing secret   ${railyard.sandbox.signingSecret}`,
    `  clock            ${config.clock}${config.clock === 'virtual' ? ' (POST /api/v1/sandbox/clock/advance moves it)' : ''}`,
    `  jobs             ${jobs ? 'on a thread of their own' : 'on the request thread'}`,
    `  store            ${describeStore(config.db)}`,
    ...(config.webhooks.sandbox_url ? [`  webhooks         ${config.webhooks.sandbox_url} (secret ${railyard.sandbox.webhookSecret})`] : []),
    `  scenarios        ${scenarios.files.length ? scenarios.files.map((f) => `${f.scenario.name} (${displayPath(f.path)}, ${f.scenario.rules.length} rules)`).join('\n                   ') : 'none'}`,
    `  openapi          ${base}/openapi.json`,
    `  dashboard        ${base}/dashboard (sign in with the sandbox key)`,
    '',
    `  provider mocks   each one takes its provider's own SDK at its base URL, with these credentials`,
    `                   (GET /api/v1/sandbox/providers lists the same; docs/providers.md explains them):`,
    ...mockBannerLines(railyard.mocks(), '    '),
    '',
    `  try: curl -s ${base}/api/v1/wallet -H "Authorization: Bearer ${railyard.sandbox.key}"`,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  // Merchant requests in flight finish (their providers, the in-process mocks, stay up), then
  // the running jobs; only then does the listener close.
  stopServing = () => {
    watcher.close();
    void listening.stop().then(() => {
      process.stdout.write('railyard stopped\n');
      process.exit(0);
    });
  };
  if (stopping) stopServing();
}

async function main(argv: string[]): Promise<void> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve();
    case 'listen':
      return listen(rest);
    case 'trigger':
      return trigger(rest);
    case 'replay':
      return replay(rest);
    case 'clock':
      return process.exit(await (await import('./cli/clock-command.ts')).clockMain(rest, USAGE));
    case 'faults':
      return process.exit(await (await import('./cli/faults-command.ts')).faultsMain(rest));
    case 'contracts':
      return contracts(rest);
    case 'scenarios':
      return process.exit(await (await import('./cli/scenarios-command.ts')).scenariosMain(rest, USAGE));
    case 'mock':
      return process.exit(await (await import('./cli/mock-command.ts')).mockMain(rest, USAGE));
    case 'record':
      return process.exit(await (await import('./cli/record-command.ts')).recordMain(rest, USAGE));
    case 'migrate':
      return process.exit(await (await import('./cli/migrate-command.ts')).migrateMain(rest, USAGE));
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
