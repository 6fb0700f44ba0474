import type { Agent as HttpAgent, IncomingHttpHeaders, request as httpRequest } from 'node:http';

export interface WireRequest {
  method: string;
  /** Path and query exactly as sent (the request target). */
  path: string;
  headers: Record<string, string | string[]>;
  body?: string;
}

export interface WireResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export function sendRequest(transport: { request: typeof httpRequest; agent: HttpAgent }, base: URL, w: WireRequest, timeoutMs: number): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const body = w.body === undefined ? undefined : Buffer.from(w.body, 'utf8');
    const headers: Record<string, string | string[] | number> = { ...w.headers };
    if (body) headers['content-length'] = body.length;
    let answered = false;
    const req = transport.request({ host: base.hostname, port: base.port, method: w.method, path: w.path, headers, agent: transport.agent }, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    // The server may answer (a body too large, say) before it has read all of ours; what it
    // answered is the result, not the broken pipe that follows.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    // A Buffer body keeps node from writing the headers in the body's encoding.
    req.end(body);
  });
}
