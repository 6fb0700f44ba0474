import { EventEmitter } from 'node:events';
import type { RailyardEvent } from '../events/event-outbox.ts';
import type { Environment } from '../kernel/environment.ts';

export interface PublishedEvent {
  environment: Environment;
  merchantId: string;
  event: RailyardEvent;
}

/** In-process fan-out of committed events to live listeners (the SSE stream behind `railyard listen`). */
export class EventStream {
  private readonly emitter = new EventEmitter().setMaxListeners(0);

  /** Whether anyone listens: publishers skip building events nobody reads. */
  listening(): boolean {
    return this.emitter.listenerCount('event') > 0;
  }

  publish(published: PublishedEvent): void {
    this.emitter.emit('event', published);
  }

  subscribe(listener: (published: PublishedEvent) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  /** Shutdown: open streams end, so the server can drain instead of waiting on them. */
  onClose(listener: () => void): () => void {
    this.emitter.on('close', listener);
    return () => this.emitter.off('close', listener);
  }

  close(): void {
    this.emitter.emit('close');
  }
}
