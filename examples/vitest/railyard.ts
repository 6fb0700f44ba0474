import { inject } from 'vitest';
import { connectRailyard } from 'railyard/testing';

/** The sandbox the global setup started, for this test file. */
export function railyard() {
  const env = inject('railyard');
  return connectRailyard({ baseUrl: env.RAILYARD_BASE_URL, key: env.RAILYARD_KEY, signingSecret: env.RAILYARD_SIGNING_SECRET });
}
