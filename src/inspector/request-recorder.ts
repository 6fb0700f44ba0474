import type { RequestHandler, Response } from 'express';
import { performance } from 'node:perf_hooks';
import type { AuthContext } from '../auth/api-key-service.ts';
import { API_FAULT_LOCAL, type AppliedFault } from '../kernel/api-fault.ts';
import type { Logger } from '../kernel/logger.ts';
import type { Environment } from '../kernel/environment.ts';
import { MOCK_MATCH_LOCAL, type RuleMatchReport } from '../scenarios/rule-explanation.ts';
import type { Store } from '../store/db.ts';
import { InspectorRepository } from '../store/repositories/inspector-repository.ts';
import type { RequestHistory } from './request-log.ts';

/** The key of res.locals under which the API's route layer leaves the authenticated key. */
export const AUTH_LOCAL = 'auth';

/** Ids of the objects a provider call can be about (what a mock call is linked to). */
const RAIL_OBJECT_ID = /\b(?:chg|trf|col|po|bil)_[0-9a-z]{12,}\b/i;

/** The inspector's own listing is not recorded: a page that polls it would fill the log with itself. */
const UNRECORDED = new Set(['/api/v1/requests']);

/** Paths longer than this are cut (an id of 4 000 characters): each entry's size stays bounded. */
const MAX_PATH = 512;

function pathOf(originalUrl: string): string {
  const q = originalUrl.indexOf('?');
  const path = q === -1 ? originalUrl : originalUrl.slice(0, q);
  return path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}…` : path;
}

/** A created or read object's id: the response's data.id (data.reference for quotes and trades). */
function dataId(body: unknown): string | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  const { id, reference } = data as { id?: unknown; reference?: unknown };
  return typeof id === 'string' ? id : typeof reference === 'string' ? reference : null;
}

/** Keeps what the response's JSON says its object is, as it is sent. */
function watchJson(res: Response): () => string | null {
  let objectId: string | null = null;
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    objectId = dataId(body);
    return json(body);
  };
  return () => objectId;
}

/**
 * Express middleware that feeds the requests inspector: one for the merchant API (after the
 * route layer authenticated the key) and one per provider mock. What is kept is listed in
 * RequestLogEntry: no header but the Idempotency-Key, no body, no query string.
 */
export class RequestRecorder {
  private readonly repo = new InspectorRepository();

  constructor(private readonly deps: { log: RequestHistory; store: Store; logger: Logger }) {}

  merchant(): RequestHandler {
    return (req, res, next) => {
      const path = pathOf(req.originalUrl);
      if (UNRECORDED.has(path)) return next();
      const started = performance.now();
      const objectId = watchJson(res);
      res.on('close', () => {
        const auth = res.locals[AUTH_LOCAL] as AuthContext | undefined;
        // A request no key authenticated belongs to no merchant.
        if (!auth) return;
        this.deps.log.record(auth.environment, auth.merchantId, {
          kind: 'merchant',
          method: req.method,
          path,
          status: res.headersSent ? res.statusCode : null,
          latency_ms: Math.round(performance.now() - started),
          idempotency_key: req.get('idempotency-key')?.slice(0, 255) ?? null,
          object_id: objectId(),
          provider: null,
          match: null,
          fault: (res.locals[API_FAULT_LOCAL] as AppliedFault | undefined) ?? null,
        });
      });
      next();
    };
  }

  mock(provider: string): RequestHandler {
    return (req, res, next) => {
      const started = performance.now();
      res.on('close', () => {
        const latency = Math.round(performance.now() - started);
        const status = res.headersSent ? res.statusCode : null;
        const match = (res.locals[MOCK_MATCH_LOCAL] as RuleMatchReport | undefined) ?? null;
        const path = pathOf(req.originalUrl);
        void this.ownerOf(req.body, path, req.get('x-reference-id'))
          .then((owner) => {
            this.deps.log.record(owner?.environment ?? 'test', owner?.merchantId ?? null, {
              kind: 'mock',
              method: req.method,
              path,
              status,
              latency_ms: latency,
              idempotency_key: null,
              object_id: owner?.objectId ?? null,
              provider,
              match,
              fault: null,
            });
          })
          .catch((err: unknown) => this.deps.logger.warn('requests inspector: mock call not recorded', { provider, error: String(err) }));
      });
      next();
    };
  }

  /**
   * The object a mock call is about, and whose it is: our id in the body or path (the adapters
   * send it as the upstream's external reference), else the upstream's reference the router kept.
   */
  private async ownerOf(body: unknown, path: string, referenceHeader: string | undefined): Promise<{ objectId: string; environment: Environment; merchantId: string } | null> {
    const text = `${path} ${typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body)}`;
    let objectId = RAIL_OBJECT_ID.exec(text)?.[0] ?? null;
    if (!objectId) {
      const references = [referenceHeader, ...path.split('/').filter((s) => s.length >= 16)].filter((r): r is string => !!r).slice(0, 6);
      if (!references.length) return null;
      const row = await this.repo.objectOfProviderReference(this.deps.store, references);
      objectId = row?.ref_id ?? null;
    }
    if (!objectId) return null;
    const owner = await this.repo.ownerOf(this.deps.store, objectId);
    return owner ? { objectId, environment: owner.environment, merchantId: owner.merchant_id } : null;
  }
}
