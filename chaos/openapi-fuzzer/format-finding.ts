import type { Finding } from './run-fuzz.ts';

/** A finding as text a person can replay: the seed, the request and what came back. */
export function formatFinding(f: Finding): string {
  const clip = (s: string | undefined, n = 2_000) => (s === undefined ? '(none)' : s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s);
  return [
    `[${f.check}] ${f.detail} (seen ${f.count}x; seed ${f.seed}, request #${f.index}, ${f.operationId ?? 'no documented operation'})`,
    `  mutations: ${f.mutations.join('; ') || 'none (a valid-looking request)'}`,
    `  request:   ${f.request.method} ${clip(f.request.path, 500)}`,
    `  headers:   ${clip(JSON.stringify(f.request.headers), 1_000)}`,
    `  body:      ${clip(f.request.body === undefined ? undefined : JSON.stringify(f.request.body))}`,
    `  response:  ${f.response ? `${f.response.status} ${clip(f.response.text)}` : '(no response)'}`,
  ].join('\n');
}
