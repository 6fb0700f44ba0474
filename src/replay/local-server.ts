import type { Server } from 'node:http';

/** Listens on a free port of 127.0.0.1. */
export function listen(server: Server): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
}

/** Closes at once: kept-alive connections would otherwise hold the close open. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((done) => server.close(() => done()));
}
