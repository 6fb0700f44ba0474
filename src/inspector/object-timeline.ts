import type { AuthContext } from '../auth/api-key-service.ts';
import { noSuch } from '../http/find-by-id.ts';
import { iso } from '../kernel/clock.ts';
import type { ObjectTimeline, ObjectTimelineEntry, TimelineKind } from '../kernel/object-timeline.ts';
import type { Db, Store } from '../store/db.ts';
import { InspectorRepository } from '../store/repositories/inspector-repository.ts';
import type { RequestHistory, RequestLogEntry } from './request-log.ts';

/** The objects that have a timeline, by id prefix. */
const OBJECTS: readonly { prefix: string; object: string }[] = [
  { prefix: 'chg_', object: 'charge' },
  { prefix: 'trf_', object: 'transfer' },
  { prefix: 'trd_', object: 'trade' },
  { prefix: 'qt_', object: 'quote' },
  { prefix: 'col_', object: 'collection' },
  { prefix: 'po_', object: 'payout' },
  { prefix: 'bil_', object: 'bill' },
];

// Entries at the same instant (a virtual clock stands still while a request runs) are ordered
// by stage, the order in which one request's life happens; within a stage, by their own sequence.
const STAGE: Record<TimelineKind, number> = {
  request: 0,
  created: 0,
  mock_call: 1,
  provider_call: 2,
  timeout: 2,
  failover: 2,
  callback: 3,
  poll: 3,
  late_success_reversed: 4,
  journal: 5,
  status: 5,
  event: 6,
  delivery: 7,
  delivery_attempt: 8,
};

/** The outcomes after which the router tries the next provider. */
const FAILS_OVER = new Set(['timeout', 'connection', 'server', 'protocol', 'skipped_down']);

/** A merchant request's line; a sandbox fault that cut its answer after the commit says so. */
function requestTitle(e: RequestLogEntry): string {
  const title = `${e.method} ${e.path}`;
  return e.fault?.dropped_after_commit ? `${title}: answer dropped after commit (rule "${e.fault.rule}")` : title;
}

function faultOf(e: RequestLogEntry): { fault?: RequestLogEntry['fault'] } {
  return e.fault ? { fault: e.fault } : {};
}

interface Sortable extends ObjectTimelineEntry {
  ms: number;
  seq: number;
}

/**
 * The whole life of one object from what the database holds (and the requests inspector's
 * memory): its request and Idempotency-Key, each provider call with failover and timeouts,
 * callbacks and polls, late successes reversed, ledger journals with postings, status changes,
 * events, and each webhook delivery attempt.
 */
export class ObjectTimelineService {
  private readonly repo = new InspectorRepository();

  constructor(private readonly deps: { requests: RequestHistory; store: Store }) {}

  async timeline(auth: AuthContext, id: string): Promise<ObjectTimeline> {
    const { store } = this.deps;
    const kind = OBJECTS.find((o) => id.startsWith(o.prefix));
    const row = kind ? await this.repo.objectHead(store, kind.object, id, auth.environment, auth.merchantId) : undefined;
    if (!kind || !row) throw noSuch('object', id);
    const { object } = kind;
    const entries: Sortable[] = [];
    const add = (ms: number, seq: number, entryKind: TimelineKind, title: string, details: Record<string, unknown>) => entries.push({ at: iso(ms), ms, seq, kind: entryKind, title, details });

    await this.requests(store, auth, id, add);
    if (!entries.some((e) => e.kind === 'request')) add(row.created_at, 0, 'created', `${object} created`, {});
    for (const call of (await this.deps.requests.forObject(auth.environment, auth.merchantId, id)).filter((e) => e.kind === 'mock')) {
      add(Date.parse(call.at), Number(call.id.slice(4)), 'mock_call', `${call.method} ${call.path} on the ${call.provider} mock: ${call.status ?? 'no answer'}`, {
        request_id: call.id,
        provider: call.provider,
        method: call.method,
        path: call.path,
        status: call.status,
        latency_ms: call.latency_ms,
        match: call.match,
      });
    }
    await this.providerCalls(store, object, id, add);
    await this.notices(store, id, add);
    await this.journals(store, object, id, add);
    if (object === 'trade') {
      const history = await this.repo.tradeStatusHistory(store, id);
      for (const h of history) add(h.at, h.seq, 'status', `status ${h.status}`, { status: h.status, note: h.note });
    }
    await this.events(store, object, id, add);

    entries.sort((a, b) => a.ms - b.ms || STAGE[a.kind] - STAGE[b.kind] || a.seq - b.seq);
    return { object_id: id, object, status: row.status, entries: entries.map(({ at, kind: k, title, details }) => ({ at, kind: k, title, details })) };
  }

  /**
   * The request that created it (its Idempotency-Key), and the other merchant requests about it
   * the inspector still holds that could change it (an OTP, a review): reads change nothing, and
   * a page that polls the object would bury its life under them.
   */
  private async requests(db: Db, auth: AuthContext, id: string, add: AddEntry): Promise<void> {
    const logged = (await this.deps.requests.forObject(auth.environment, auth.merchantId, id)).filter((e) => e.kind === 'merchant' && e.method !== 'GET');
    const claims = await this.repo.idempotencyClaims(db, id, auth.environment, auth.merchantId);
    const used = new Set<RequestLogEntry>();
    for (const claim of claims) {
      const first = logged.find((e) => e.idempotency_key === claim.idempotency_key);
      if (first) used.add(first);
      add(claim.created_at, 0, 'request', first ? requestTitle(first) : `request with Idempotency-Key ${claim.idempotency_key}`, {
        idempotency_key: claim.idempotency_key,
        idempotency_state: claim.state,
        response_status: claim.response_status,
        ...(first ? { request_id: first.id, method: first.method, path: first.path, status: first.status, latency_ms: first.latency_ms, ...faultOf(first) } : {}),
      });
    }
    for (const e of logged) {
      if (used.has(e)) continue;
      add(Date.parse(e.at), Number(e.id.slice(4)), 'request', requestTitle(e), {
        request_id: e.id,
        method: e.method,
        path: e.path,
        status: e.status,
        latency_ms: e.latency_ms,
        idempotency_key: e.idempotency_key,
        ...faultOf(e),
      });
    }
  }

  /** Each provider call the router made, with a failover entry wherever it moved on to the next provider. */
  private async providerCalls(db: Db, object: string, id: string, add: AddEntry): Promise<void> {
    const attempts = await this.repo.railAttempts(db, object, id);
    attempts.forEach((a, i) => {
      const details = { provider: a.provider, operation: a.operation, outcome: a.outcome, latency_ms: a.latency_ms, provider_reference: a.provider_reference, detail: a.detail };
      const title =
        a.outcome === 'accepted'
          ? `${a.provider} accepted the ${a.operation}`
          : a.outcome === 'timeout'
            ? `${a.provider} timed out on the ${a.operation}`
            : a.outcome === 'skipped_down'
              ? `${a.provider} skipped: marked down`
              : `${a.provider} failed the ${a.operation} (${a.outcome})`;
      add(a.created_at, a.seq * 2, a.outcome === 'timeout' ? 'timeout' : 'provider_call', title, details);
      const next = attempts[i + 1];
      if (next && FAILS_OVER.has(a.outcome)) {
        add(a.created_at, a.seq * 2 + 1, 'failover', `failover from ${a.provider} to ${next.provider}`, { from: a.provider, to: next.provider, reason: a.outcome });
      }
    });
  }

  /** Callbacks and status polls, and late successes of abandoned providers (reversed). */
  private async notices(db: Db, id: string, add: AddEntry): Promise<void> {
    const notices = await this.repo.railNotices(db, id);
    for (const n of notices) {
      const said = `${n.status}${n.reason ? ` (${n.reason})` : ''}`;
      const title = n.source === 'callback' ? `callback from ${n.provider}: ${said} -> ${n.result}` : `status poll of ${n.provider}: ${said} -> ${n.result}`;
      add(n.created_at, n.seq, n.source, title, { provider: n.provider, status: n.status, reason: n.reason, result: n.result });
    }
    const late = await this.repo.lateSettlements(db, id);
    for (const l of late) {
      add(l.created_at, l.seq, 'late_success_reversed', `late success from ${l.provider}, reversed`, {
        provider: l.provider,
        amount: l.amount,
        source: l.source,
        journal_id: l.journal_id,
        reversal_journal_id: l.reversal_journal_id,
      });
    }
  }

  /** Ledger journals about it, each with its postings. */
  private async journals(db: Db, object: string, id: string, add: AddEntry): Promise<void> {
    const journals = await this.repo.journals(db, object, id);
    if (!journals.length) return;
    const postings = await this.repo.postings(
      db,
      journals.map((j) => j.id),
    );
    for (const j of journals) {
      add(j.created_at, j.seq, 'journal', `journal ${j.kind}: ${j.memo}`, {
        journal_id: j.id,
        kind: j.kind,
        memo: j.memo,
        reverses: j.reverses,
        postings: postings.filter((p) => p.journal_id === j.id).map(({ account, currency, amount }) => ({ account, currency, amount })),
      });
    }
  }

  /** Events about it, their webhook deliveries and each delivery attempt. */
  private async events(db: Db, object: string, id: string, add: AddEntry): Promise<void> {
    const events = await this.repo.events(db, object, id);
    if (!events.length) return;
    for (const e of events) add(e.created_at, e.seq, 'event', e.type, { event_id: e.id, type: e.type });
    const deliveries = await this.repo.deliveries(
      db,
      events.map((e) => e.id),
    );
    if (!deliveries.length) return;
    for (const d of deliveries) {
      add(d.created_at, d.seq, 'delivery', `${d.event_type} to ${d.endpoint_id}: ${d.status}`, { delivery_id: d.id, event_id: d.event_id, endpoint_id: d.endpoint_id, status: d.status });
    }
    const attempts = await this.repo.attempts(
      db,
      deliveries.map((d) => d.id),
    );
    for (const a of attempts) {
      const delivery = deliveries.find((d) => d.id === a.delivery_id)!;
      add(a.at, a.seq, 'delivery_attempt', `${delivery.event_type} attempt ${a.attempt} to ${a.url}: ${a.http_status ?? a.error ?? 'no answer'}`, {
        delivery_id: a.delivery_id,
        event_id: delivery.event_id,
        endpoint_id: delivery.endpoint_id,
        attempt: a.attempt,
        trigger: a.trigger,
        url: a.url,
        http_status: a.http_status,
        latency_ms: a.latency_ms,
        response_excerpt: a.response_excerpt,
        error: a.error,
      });
    }
  }
}

type AddEntry = (ms: number, seq: number, kind: TimelineKind, title: string, details: Record<string, unknown>) => void;
