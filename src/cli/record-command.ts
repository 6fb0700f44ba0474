import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, resolve } from 'node:path';
import { createApp, type Railyard } from '../app.ts';
import { answerClientError } from '../http/error-mapper.ts';
import { iso, SystemClock, type Clock } from '../kernel/clock.ts';
import { jsonLogger, silentLogger, type Logger } from '../kernel/logger.ts';
import { buildRecordedScenario, type RecordedScenario } from '../recorder/recorded-scenario.ts';
import { RecordingProxy } from '../recorder/recording-proxy.ts';
import { Redactor } from '../kernel/redactor.ts';
import { WIRE_PROFILES, wireProfileFor } from '../recorder/wire-profiles.ts';
import type { ScenarioRule, Wallet } from '../scenarios/scenario-schema.ts';
import { configuredScenarioPaths, isHttpUrl, isPort, parseCommandArgs, stopSignal, usageError } from './cli-support.ts';
import { buildConfig, loadConfig, type RailyardConfig } from '../railyard-config.ts';
import { loadScenarios } from '../railyard-scenarios.ts';

// `railyard record`: railyard served as by `railyard serve`, with one provider's adapter pointed
// at a recording proxy in front of a real upstream; on stop, what crossed becomes a scenario file.

export interface RecordOptions {
  provider: string;
  upstream: string;
  out: string;
  config: RailyardConfig;
  rules: readonly ScenarioRule[];
  wallets?: readonly Wallet[];
  /** The proxy's port; default any free one. */
  proxyPort?: number;
  /** A public origin that reaches the proxy (a tunnel), for an upstream on the internet to call back on. */
  callbackOrigin?: string;
  logger?: Logger;
  /**
   * The recorder's clock: when the recording started and how long the upstream took to call
   * back. By default the system clock (and a monotonic one for the delays); a test recording a
   * mock on a virtual clock passes that clock, so the delays written are the mock's own.
   */
  clock?: Clock;
}

export interface Recording {
  railyard: Railyard;
  /** railyard's merchant API. */
  railyardUrl: string;
  /** Where railyard's adapter for the provider now points. */
  proxyUrl: string;
  /** For an upstream with one webhook URL set in its dashboard (Paystack): the URL to set there. */
  webhookUrl?: string;
  /** Stops railyard and the proxy, then writes the scenario file. */
  stop(): Promise<RecordedScenario & { path: string }>;
}

/** The configuration railyard records with: the provider served by the proxy, and first in line. */
function recordingConfig(options: RecordOptions, proxyBase: string, callbackOrigin: string): RailyardConfig {
  const profile = wireProfileFor(options.provider);
  const providers: Record<string, unknown> = {};
  for (const [name, provider] of Object.entries(options.config.providers)) {
    // Every call the recorded provider can serve goes to it first.
    providers[name] =
      name === options.provider ? { ...profile.pointAt(options.config, proxyBase, callbackOrigin), enabled: true, priority: 1 } : { ...provider, priority: Math.max(provider.priority, 2) };
  }
  return buildConfig({ ...structuredClone(options.config), providers });
}

export async function startRecording(options: RecordOptions): Promise<Recording> {
  const profile = wireProfileFor(options.provider);
  const upstream = new URL(options.upstream);
  const proxy = new RecordingProxy({
    profile,
    config: options.config,
    upstream: upstream.href,
    ...(options.clock ? { now: () => options.clock!.now() } : {}),
    ...(options.callbackOrigin ? { callbackOrigin: options.callbackOrigin } : {}),
  });
  await proxy.listen(options.proxyPort ?? 0);
  const config = recordingConfig(options, proxy.baseUrl, proxy.callbackOrigin);
  const railyard = await createApp(config, { logger: options.logger ?? silentLogger, rules: options.rules, wallets: options.wallets ?? [] });
  const server = createServer(railyard.app);
  server.on('clientError', answerClientError);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(config.port, config.host, () => done());
  });
  const { port } = server.address() as AddressInfo;
  const railyardUrl = `http://127.0.0.1:${port}`;
  railyard.setBaseUrl(railyardUrl);
  const webhookUrl = profile.webhookPath ? proxy.receiveWebhooks(profile.webhookPath, `${railyardUrl}${profile.webhookPath}`) : undefined;
  railyard.scheduler.start();
  await railyard.recoverInterrupted();
  const clock = options.clock ?? new SystemClock();
  const startedAt = iso(clock.now());
  const redactor = new Redactor([
    config.sandbox.key,
    config.sandbox.signing_secret,
    ...profile.secrets(config),
    // Credentials written into the upstream URL never reach the file either.
    ...[decodeURIComponent(upstream.username), decodeURIComponent(upstream.password)].filter(Boolean),
  ]);

  let stopped: Promise<RecordedScenario & { path: string }> | undefined;
  const stop = async () => {
    await railyard.scheduler.stop();
    await new Promise<void>((done) => {
      server.close(() => done());
      server.closeAllConnections();
    });
    await proxy.close();
    await railyard.close();
    const path = resolve(options.out);
    const recorded = buildRecordedScenario(
      {
        provider: options.provider,
        profile,
        exchanges: proxy.exchanges,
        callbacks: proxy.callbacks,
        redactor,
        upstream: upstream.href,
        recordedAt: startedAt,
        identities: profile.identities?.(config),
      },
      path,
    );
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, recorded.text);
    return { ...recorded, path };
  };
  return {
    railyard,
    railyardUrl,
    proxyUrl: proxy.baseUrl,
    ...(webhookUrl ? { webhookUrl } : {}),
    stop: () => (stopped ??= stop()),
  };
}

export interface RecordIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  signal: AbortSignal;
}

/** Records until the signal aborts (SIGINT, SIGTERM, or --duration), then writes the file. */
export async function runRecord(options: RecordOptions, io: RecordIo): Promise<number> {
  const recording = await startRecording(options);
  const { railyard } = recording;
  io.stdout.write(
    [
      '',
      `  railyard is recording ${options.provider} at ${options.upstream}`,
      '',
      `  merchant API     ${recording.railyardUrl}  (sandbox key ${railyard.sandbox.key})`,
      `  proxy            ${recording.proxyUrl}  (railyard's ${options.provider} adapter calls it)`,
      recording.webhookUrl
        ? `  webhooks         ${recording.webhookUrl}  (set it as ${options.provider}'s webhook URL, in its dashboard)`
        : `  callbacks        ${options.callbackOrigin ?? recording.proxyUrl} is the callback origin the upstream is given`,
      `  writes           ${resolve(options.out)} on Ctrl-C`,
      '',
      '',
    ].join('\n'),
  );
  await new Promise<void>((done) => (io.signal.aborted ? done() : io.signal.addEventListener('abort', () => done(), { once: true })));
  const written = await recording.stop();
  io.stdout.write(`wrote ${written.rules} rule(s) to ${written.path}\n`);
  return 0;
}

/** `railyard record --provider <name> --upstream <url> [...]` from its arguments; the exit code. */
export async function recordMain(args: string[], usage: string): Promise<number> {
  const parsed = parseCommandArgs('record', usage, {
    args,
    strict: true,
    allowPositionals: false,
    options: {
      provider: { type: 'string' },
      upstream: { type: 'string' },
      out: { type: 'string' },
      duration: { type: 'string' },
      'proxy-port': { type: 'string' },
      'callback-origin': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (!parsed) return 2;
  const { values } = parsed;
  if (values.help) return (void process.stdout.write(usage), 0);
  const callbackOrigin = values['callback-origin'];
  const proxyPort = values['proxy-port'];
  const problems = [
    ...(values.provider && WIRE_PROFILES[values.provider] ? [] : [`--provider is one of ${Object.keys(WIRE_PROFILES).join(', ')}`]),
    ...(values.upstream && isHttpUrl(values.upstream) ? [] : ['--upstream must be an http(s) URL']),
    ...(callbackOrigin === undefined || isHttpUrl(callbackOrigin) ? [] : ['--callback-origin must be an http(s) URL']),
    ...(values.duration === undefined || Number(values.duration) > 0 ? [] : ['--duration is a number of seconds above 0']),
    ...(proxyPort === undefined || isPort(proxyPort) ? [] : ['--proxy-port is from 0 to 65535']),
  ];
  if (problems.length) return usageError('record', problems.join('; '), usage);
  const provider = values.provider!;
  const config = loadConfig();
  const scenarios = loadScenarios(configuredScenarioPaths(config.scenarios));
  return runRecord(
    {
      provider,
      upstream: values.upstream!,
      out: values.out ?? `scenarios/recorded-${provider}.yaml`,
      config,
      rules: scenarios.rules,
      wallets: scenarios.wallets,
      ...(proxyPort !== undefined ? { proxyPort: Number(proxyPort) } : {}),
      ...(callbackOrigin ? { callbackOrigin } : {}),
      logger: config.log_requests ? jsonLogger() : silentLogger,
    },
    { stdout: process.stdout, stderr: process.stderr, signal: stopSignal(values.duration === undefined ? undefined : Number(values.duration)) },
  );
}
