// Requests node's HTTP parser refuses never reach express; answerClientError gives them the
// envelope too, instead of node's bare 400 or 431.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../src/http/error-mapper.ts';

let server: Server;

/** Sends bytes as they are and returns the whole answer. */
function raw(text: string): Promise<string> {
  return new Promise((done, fail) => {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => socket.end(text));
    let out = '';
    socket.on('data', (chunk) => (out += chunk));
    socket.on('close', () => done(out));
    socket.on('error', fail);
  });
}

function parse(answer: string): { status: number; contentType: string | undefined; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1]),
    contentType: /\r\ncontent-type: ([^\r]+)/i.exec(head!)?.[1],
    body: JSON.parse(body!),
  };
}

beforeAll(async () => {
  server = createServer((_req, res) => void res.end('{}'));
  server.on('clientError', answerClientError);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
});

describe('answerClientError', () => {
  it.each([
    ['headers over 16 kB', `GET /api/v1/wallet HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 'headers'],
    ['a header line without a colon', 'GET /api/v1/wallet HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 'request'],
    ['a space in the request target', 'GET /api/v1/wal let HTTP/1.1\r\nHost: x\r\n\r\n', 'request'],
  ])('answers %s with 400 validation_error in the envelope', async (_label, request, field) => {
    const answer = parse(await raw(request));
    expect(answer.status).toBe(400);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body).toEqual({ status: false, message: expect.any(String), error: { code: 'validation_error', details: { fields: [{ field, message: expect.any(String) }] } } });
  });
});
