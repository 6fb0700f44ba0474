import type { Request, Response } from 'express';
import type { Logger } from '../../kernel/logger.ts';
import type { ProviderBehaviour, RailQuery } from '../../scenarios/scenario-types.ts';
import { WIRE_FAULT_LOCAL } from './wire-response-log.ts';

// Stage 4 of the pipeline: what a scenario's behaviour does to the HTTP exchange. Accept is the
// wire's to answer; every other kind is answered here, with the wire's own error bodies.

/** What a gateway in front of any upstream might answer: not the upstream's JSON, so unreadable. */
export const MALFORMED_BODY = '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';

/** A provider-neutral call: the rule engine's query without the provider, which the engine adds. */
export type MockQuery = Pick<RailQuery, 'operation' | 'channel' | 'msisdn' | 'account_number' | 'bank_code' | 'network' | 'amount' | 'card'>;

/** One HTTP exchange in progress, and the status the operation answers with when it succeeds. */
export interface Exchange {
  req: Request;
  res: Response;
  /** A malformed answer carries it: the client sees success, then cannot read the body. */
  successStatus: number;
}

/** How a wire refuses: its own error bodies for a scenario's reject and server_error. */
export interface WireRefusals {
  /** A 4xx-style refusal (or the upstream's own status for it) naming behaviour.reason. */
  reject(res: Response, behaviour: ProviderBehaviour, query: MockQuery): void;
  /** A 5xx (behaviour.http_status, else 500) in the upstream's error format. */
  serverError(res: Response, behaviour: ProviderBehaviour, query: MockQuery): void;
}

/**
 * Did the upstream take the request? Accept always does. Timeout, malformed or reset with a
 * callback (or extra callbacks) planned: it took it although the caller heard no usable answer.
 */
export function takesRequest(behaviour: ProviderBehaviour): boolean {
  switch (behaviour.respond) {
    case 'accept':
      return true;
    case 'timeout':
    case 'malformed':
    case 'reset':
      return behaviour.callback !== undefined || (behaviour.extra_callbacks?.length ?? 0) > 0;
    case 'reject':
    case 'server_error':
      return false;
  }
}

/** Waits out a behaviour's latency (real time: it is the network's). */
export async function pause(behaviour: ProviderBehaviour | undefined): Promise<void> {
  if (behaviour?.latency_ms) await new Promise((resolve) => setTimeout(resolve, behaviour.latency_ms));
}

/**
 * Holds the request open until the client gives up or maxHoldMs passes, then hangs up without
 * an answer: the simulated timeout.
 */
export function holdOpen(exchange: Pick<Exchange, 'req' | 'res'>, maxHoldMs: number, logger: Logger, provider: string): Promise<void> {
  const { req, res } = exchange;
  return new Promise((resolve) => {
    const release = (after: 'client_closed' | 'max_hold') => {
      clearTimeout(timer);
      res.off('close', onClose);
      if (!res.destroyed) res.destroy();
      logger.info(`${provider} mock released a held request`, { path: req.originalUrl.split('?')[0], after });
      resolve();
    };
    const onClose = () => release('client_closed');
    const timer = setTimeout(() => release('max_hold'), maxHoldMs);
    if (res.destroyed || res.writableEnded || req.socket.destroyed) release('client_closed');
    else res.on('close', onClose);
  });
}

/** Answers every behaviour but accept, which only the wire can answer. */
export class BehaviourStage {
  constructor(private readonly deps: { provider: string; maxHoldMs: number; logger: Logger; refusals: WireRefusals }) {}

  async answer(behaviour: ProviderBehaviour, exchange: Exchange, query: MockQuery): Promise<void> {
    const { req, res } = exchange;
    switch (behaviour.respond) {
      case 'accept':
        return; // the wire answers
      case 'timeout':
        return holdOpen(exchange, this.deps.maxHoldMs, this.deps.logger, this.deps.provider);
      case 'malformed':
        if (res.headersSent || res.destroyed) return;
        res.locals[WIRE_FAULT_LOCAL] = 'malformed';
        return void res.status(exchange.successStatus).type('text/html').send(MALFORMED_BODY);
      case 'reset':
        return void req.socket.destroy();
      case 'server_error':
        return this.deps.refusals.serverError(res, behaviour, query);
      case 'reject':
        return this.deps.refusals.reject(res, behaviour, query);
    }
  }
}
