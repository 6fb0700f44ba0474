// The shape of GET /api/v1/objects/{id}/timeline, shared by the inspector that builds it and
// the dashboard that draws it (which may import only kernel/).

export const TIMELINE_KINDS = [
  'request',
  'created',
  'mock_call',
  'provider_call',
  'timeout',
  'failover',
  'callback',
  'poll',
  'late_success_reversed',
  'journal',
  'status',
  'event',
  'delivery',
  'delivery_attempt',
] as const;

export type TimelineKind = (typeof TIMELINE_KINDS)[number];

export interface ObjectTimelineEntry {
  at: string;
  kind: TimelineKind;
  title: string;
  details: Record<string, unknown>;
}

export interface ObjectTimeline {
  object_id: string;
  object: string;
  status: string;
  entries: ObjectTimelineEntry[];
}
