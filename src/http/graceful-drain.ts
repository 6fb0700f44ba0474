import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';

/**
 * A stop that finishes what it started. Once draining, a new merchant request is refused the way
 * a closed listener would refuse it (the connection is dropped unanswered, so the client retries
 * elsewhere or later), while requests already in flight run to their end. The in-process mocks
 * and the callback receiver stay reachable meanwhile: an initiation in flight still needs its
 * provider, and a callback its receiver.
 */
export class GracefulDrain {
  private draining = false;
  private inFlight = 0;
  private idle: (() => void) | null = null;

  constructor(private readonly internalPrefixes: readonly string[] = ['/mocks/', '/internal/']) {}

  wrap(handler: RequestListener): RequestListener {
    return (req: IncomingMessage, res: ServerResponse) => {
      const url = req.url ?? '/';
      if (this.internalPrefixes.some((prefix) => url.startsWith(prefix))) return handler(req, res);
      if (this.draining) {
        req.socket.destroy();
        return;
      }
      this.inFlight++;
      res.once('close', () => {
        this.inFlight--;
        if (this.draining && this.inFlight === 0) this.idle?.();
      });
      return handler(req, res);
    };
  }

  /** Refuses new merchant requests from now on; resolves when none is in flight. */
  drain(): Promise<void> {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((done) => (this.idle = done));
  }
}
