import express, { type RequestHandler } from 'express';
import type { InboundCallback } from '../../src/rails/provider-port.ts';

/** A stand-in for railyard's callback receiver: keeps every callback as the adapter would see it. */
export function captureCallbacks(into: InboundCallback[]): RequestHandler[] {
  return [
    express.text({ type: '*/*' }),
    (req, res) => {
      const rawBody = typeof req.body === 'string' ? req.body : '';
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      into.push({ method: req.method, subpath: req.path, headers: req.headers, rawBody, body });
      res.status(200).end();
    },
  ];
}
