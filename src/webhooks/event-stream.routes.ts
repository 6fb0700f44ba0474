import express, { type Router } from 'express';
import type { ApiKeyService } from '../auth/api-key-service.ts';
import { failure } from '../http/envelope.ts';
import { toErrorResponse } from '../http/error-mapper.ts';
import { ForbiddenError } from '../kernel/errors.ts';
import type { Logger } from '../kernel/logger.ts';
import type { EventStream } from './event-stream.ts';
import { EVENT_TYPES } from './webhook.schemas.ts';

/**
 * GET /api/v1/events/stream: server-sent events, one per committed event of this key's merchant
 * and environment, as they are dispatched. `types` (comma-separated) narrows them. `railyard
 * listen` reads this and forwards each event, signed, to a local URL.
 */
export function eventStreamRouter(deps: { apiKeys: ApiKeyService; stream: EventStream; logger: Logger }): Router {
  const router = express.Router();
  router.get('/api/v1/events/stream', async (req, res) => {
    let auth: Awaited<ReturnType<typeof deps.apiKeys.authenticate>>;
    let types: Set<string> | null = null;
    try {
      auth = await deps.apiKeys.authenticate(req.get('authorization'), req.ip, res.locals.lookedUpKey);
      if (!auth.scopes.includes('read')) throw new ForbiddenError('This API key lacks the read scope', { required_scope: 'read' });
      const raw = typeof req.query.types === 'string' ? req.query.types : undefined;
      if (raw !== undefined) {
        const wanted = raw
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean);
        const unknown = wanted.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
        if (unknown.length || wanted.length === 0) {
          res.status(400).json(failure('validation_error', `Unknown event types: ${unknown.join(', ') || '(none given)'}`, { fields: [{ field: 'query.types', message: 'unknown event type' }] }));
          return;
        }
        types = new Set(wanted);
      }
    } catch (err) {
      const { status, body } = toErrorResponse(err, deps.logger);
      res.status(status).json(body);
      return;
    }
    res.status(200).set({ 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    res.write(': connected\n\n');
    const { environment, merchantId } = auth;
    const unsubscribe = deps.stream.subscribe((published) => {
      if (published.environment !== environment || published.merchantId !== merchantId) return;
      if (types && !types.has(published.event.type)) return;
      res.write(`id: ${published.event.id}\nevent: ${published.event.type}\ndata: ${JSON.stringify(published.event)}\n\n`);
    });
    // Comments keep proxies and idle timeouts from closing a quiet stream.
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), 15_000);
    heartbeat.unref();
    const stopOnShutdown = deps.stream.onClose(() => res.end());
    req.on('close', () => {
      clearInterval(heartbeat);
      unsubscribe();
      stopOnShutdown();
    });
  });
  return router;
}
