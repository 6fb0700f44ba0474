// A scenario's sandbox, open: the file's rules and wallets in a fresh in-process railyard on a
// virtual clock, listening on a random port. With `replay.webhook_receiver`, any expect_webhook
// step, or when the caller asks, a local receiver is registered as a webhook endpoint (for every
// event type) before the first step.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type Railyard } from '../app.ts';
import { VIRTUAL_EPOCH, type Clock } from '../kernel/clock.ts';
import { RecordingTimeline } from '../kernel/timeline.ts';
import type { UpstreamTap } from '../rails/upstream-tap.ts';
import type { ScriptStep } from '../scenarios/script-schema.ts';
import { closeServer, listen } from './local-server.ts';
import { replayConfig } from './replay-config.ts';
import type { RecordedExchange, RunContext } from './run-context.ts';
import { sendToSandbox, summariseResponse } from './sandbox-request.ts';
import type { ScenarioSource } from './scenario-source.ts';
import { runAdvanceStep } from './steps/advance-step.ts';
import { runExpectLedgerStep } from './steps/expect-ledger-step.ts';
import { runExpectProviderCallsStep } from './steps/expect-provider-calls-step.ts';
import { runExpectWebhookStep } from './steps/expect-webhook-step.ts';
import { runRequestStep } from './steps/request-step.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './webhook-receiver.ts';

export interface SessionOptions {
  seed: number;
  /** Register the local webhook receiver even when the script does not ask for it. */
  receiver?: boolean;
  upstreamTap?: UpstreamTap;
}

async function runStep(ctx: RunContext, step: ScriptStep, index: number): Promise<void> {
  if ('request' in step) return runRequestStep(ctx, step, index);
  if ('advance' in step) return runAdvanceStep(ctx, step);
  if ('expect_webhook' in step) return runExpectWebhookStep(ctx, step);
  if ('expect_ledger' in step) return runExpectLedgerStep(ctx, step);
  return runExpectProviderCallsStep(ctx, step);
}

/**
 * A scenario's sandbox, open: steps run one at a time. The replay runs a whole script in one;
 * contract verification rebuilds the state before a step in a fresh one.
 */
export class ScenarioSession {
  private constructor(
    readonly file: ScenarioSource,
    private readonly ctx: RunContext,
    private readonly server: Server,
    /** Business time at the start, ms. */
    readonly start: number,
  ) {}

  /** Opens the sandbox: the file's rules and replay configuration, a virtual clock, the seed. Throws on a bad configuration. */
  static async open(file: ScenarioSource, options: SessionOptions, timeline?: RecordingTimeline): Promise<ScenarioSession> {
    const config = replayConfig(file, options.seed);
    let appClock: Clock | undefined;
    const fallbackStart = config.virtual_start ? Date.parse(config.virtual_start) : VIRTUAL_EPOCH;
    const tl = timeline ?? new RecordingTimeline({ kind: 'virtual', now: () => appClock?.now() ?? fallbackStart });
    const ry = await createApp(config, {
      rules: file.scenario.rules,
      wallets: file.scenario.wallets,
      apiRules: file.scenario.api,
      timeline: tl,
      ...(options.upstreamTap ? { upstreamTap: options.upstreamTap } : {}),
    });
    appClock = ry.clock;
    const server = createServer(ry.app);
    let receiver: WebhookReceiver | null = null;
    try {
      await listen(server);
      const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      ry.setBaseUrl(baseUrl);
      const ctx: RunContext = { ry, baseUrl, timeline: tl, receiver: null, vars: {}, exchange: null };
      const settings = file.scenario.replay?.webhook_receiver;
      if (options.receiver || settings || (file.scenario.script ?? []).some((s) => 'expect_webhook' in s)) {
        receiver = await startWebhookReceiver(settings?.fail_first ?? 0, settings?.status ?? 500);
        ctx.receiver = receiver;
        const res = await sendToSandbox(ctx, { method: 'POST', path: '/api/v1/webhook_endpoints', body: { url: receiver.url } });
        const secret = (res.body as { data?: { secret?: unknown } } | null)?.data?.secret;
        if (res.status !== 201 || typeof secret !== 'string') throw new Error(`could not register the webhook receiver: ${res.status} ${summariseResponse(res.body)}`);
        receiver.secret = secret;
      }
      return new ScenarioSession(file, ctx, server, ry.clock.now());
    } catch (err) {
      if (receiver) await receiver.close();
      await closeServer(server);
      await ry.close();
      throw err;
    }
  }

  get ry(): Railyard {
    return this.ctx.ry;
  }
  get baseUrl(): string {
    return this.ctx.baseUrl;
  }
  get timeline(): RecordingTimeline {
    return this.ctx.timeline;
  }
  /** Variables saved by `as:` so far. */
  get vars(): Record<string, unknown> {
    return this.ctx.vars;
  }
  /** Webhooks the local receiver got so far, in arrival order (none without a receiver). */
  get webhooks(): readonly ReceivedWebhook[] {
    return this.ctx.receiver?.received ?? [];
  }
  /** Whole bodies of the webhooks received, by event id. */
  webhookPayload(id: string): unknown {
    return this.ctx.receiver?.payloads.get(id);
  }
  /** The last scripted request and its answer. */
  get exchange(): RecordedExchange | null {
    return this.ctx.exchange;
  }

  /** Runs step `index` (1-based) of the script; throws with the reason when its check fails. */
  async runStep(index: number): Promise<void> {
    const step = (this.file.scenario.script ?? [])[index - 1];
    if (!step) throw new Error(`${this.file.path} has no step ${index}`);
    this.ctx.exchange = null;
    await runStep(this.ctx, step, index);
  }

  async close(): Promise<void> {
    if (this.ctx.receiver) await this.ctx.receiver.close();
    await closeServer(this.server);
    await this.ctx.ry.close();
  }
}
