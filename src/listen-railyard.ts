import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Railyard } from './app.ts';
import { answerClientError } from './http/error-mapper.ts';
import { GracefulDrain } from './http/graceful-drain.ts';

// What `railyard serve` does with the app createApp wires, and what railyard/testing does in a
// merchant's own test process: listen, learn the port, start the scheduler, finish what a stopped
// process left in flight, and stop in the order that loses nothing.

export interface ListeningRailyard {
  server: Server;
  /** The port it listens on (the one the OS chose for port 0). */
  port: number;
  /** `http://127.0.0.1:<port>`: where railyard's adapters reach its in-process mocks. */
  localUrl: string;
  /**
   * Finishes the initiations earlier processes left in flight (their Idempotency-Keys get real
   * answers); the first request that retries one waits for the same recovery.
   */
  recovery: Promise<number>;
  /** Merchant requests in flight finish, then the running job; then the listener and the app close. */
  stop(): Promise<void>;
}

/** Who runs the jobs, when not this thread's scheduler: the job thread (start-job-thread.ts). */
export interface JobRunner {
  /** Starts running the jobs once the app listens at `localUrl`. */
  start(localUrl: string): Promise<void>;
  /** Lets the running jobs finish, then stops. */
  stop(): Promise<void>;
}

export async function listenRailyard(railyard: Railyard, at: { port: number; host: string; pollMs?: number; jobs?: JobRunner }): Promise<ListeningRailyard> {
  const drain = new GracefulDrain();
  const server = createServer(drain.wrap(railyard.app));
  // Requests node's HTTP parser refuses (oversized headers, a malformed line) get the envelope too.
  server.on('clientError', answerClientError);
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(at.port, at.host, () => done());
  });
  const port = (server.address() as AddressInfo).port;
  const localUrl = `http://127.0.0.1:${port}`;
  railyard.setBaseUrl(localUrl);
  if (at.jobs) await at.jobs.start(localUrl);
  else railyard.scheduler.start(at.pollMs);
  // Recovery needs the mocks, which are reached over HTTP: so only once listening.
  const recovery = railyard.recoverInterrupted();
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      railyard.stream.close(); // end open event streams (railyard listen reconnects)
      await drain.drain();
      await (at.jobs ? at.jobs.stop() : railyard.scheduler.stop());
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
      await railyard.close();
    })());
  return { server, port, localUrl, recovery, stop };
}
