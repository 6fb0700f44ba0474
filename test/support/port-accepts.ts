import { connect } from 'node:net';

/** Whether something accepts a TCP connection on this loopback port now. */
export function portAccepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}
