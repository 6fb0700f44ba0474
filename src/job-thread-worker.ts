import { parentPort, workerData } from 'node:worker_threads';
import { createApp } from './app.ts';
import type { FromJobThread, JobThreadData, ToJobThread } from './start-job-thread.ts';
import type { RequestHistory } from './inspector/request-log.ts';
import { jsonLogger, silentLogger } from './kernel/logger.ts';
import type { Decision, RailQuery } from './scenarios/scenario-types.ts';
import { WriteTurn } from './store/write-turn.ts';

// The job thread's own module (start-job-thread.ts starts it): an app on the same SQLite file that
// answers no request and runs the scheduler.

const data = workerData as JobThreadData;
const port = parentPort!;
const send = (message: FromJobThread) => port.postMessage(message);

const asked = new Map<number, { resolve: (decision: Decision | undefined) => void; reject: (error: Error) => void }>();
let lastAsked = 0;
/** A scenario decision, taken by the request thread's engine. */
const decide = (query: RailQuery) =>
  new Promise<Decision | undefined>((resolve, reject) => {
    const id = ++lastAsked;
    asked.set(id, { resolve, reject });
    send({ type: 'decide', id, query });
  });

const requestLog: RequestHistory = {
  record: (environment, merchantId, entry) => send({ type: 'record', environment, merchantId, entry }),
  list: () => {
    throw new Error('the job thread lists no requests: the request thread keeps the log');
  },
  forObject: () => {
    throw new Error('the job thread lists no requests: the request thread keeps the log');
  },
};

const railyard = await createApp(data.config, {
  logger: data.config.log_requests ? jsonLogger() : silentLogger,
  thread: { role: 'jobs', writeTurn: new WriteTurn(data.writeTurn), boot: data.boot, decide, requestLog },
});
railyard.health.adopt(data.providers);
railyard.setBaseUrl(data.baseUrl);
// The scheduler's timer does not hold a process open; this one holds the thread until it stops.
const alive = setInterval(() => undefined, 1 << 30);

port.on('message', (message: ToJobThread) => {
  switch (message.type) {
    case 'decided': {
      const waiting = asked.get(message.id);
      asked.delete(message.id);
      if (message.error !== undefined) waiting?.reject(new Error(message.error));
      else waiting?.resolve(message.decision);
      return;
    }
    case 'providers':
      railyard.health.adopt(message.rows);
      return;
    case 'stop':
      void (async () => {
        await railyard.scheduler.stop();
        await railyard.close();
        clearInterval(alive);
        send({ type: 'stopped' });
        port.close();
      })();
      return;
  }
});

railyard.scheduler.start(data.pollMs);
send({ type: 'ready' });
