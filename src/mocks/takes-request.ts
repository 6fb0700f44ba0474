import type { ProviderBehaviour } from '../scenarios/scenario-types.ts';

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
