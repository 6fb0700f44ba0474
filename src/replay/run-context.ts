import type { Railyard } from '../app.ts';
import type { RecordingTimeline } from '../kernel/timeline.ts';
import type { WebhookReceiver } from './webhook-receiver.ts';

/** What the steps of one open scenario share: the sandbox, its timeline, the receiver, saved responses. */
export interface RunContext {
  ry: Railyard;
  baseUrl: string;
  timeline: RecordingTimeline;
  receiver: WebhookReceiver | null;
  vars: Record<string, unknown>;
  /** The last scripted request and its answer. */
  exchange: RecordedExchange | null;
}

/** A scripted request as sent and answered: what contract generation turns into an interaction. */
export interface RecordedExchange {
  method: string;
  /** As sent, and as written in the script (`/api/v1/charges/${charge.body.data.id}`). */
  path: string;
  pathTemplate: string;
  body: unknown;
  bodyTemplate: unknown;
  idempotent: boolean;
  status: number;
  contentType: string | null;
  response: unknown;
}
