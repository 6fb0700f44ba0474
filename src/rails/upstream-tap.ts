// What sees railyard's traffic to its upstreams. Its own file so that the port (which hands a tap
// to each adapter) and the HTTP call (which feeds it) both depend on it, not on each other.

/** A request as it leaves for an upstream: what contract generation records. */
export interface UpstreamRequest {
  provider: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Sees railyard's traffic to its upstreams (contract generation and verification). */
export interface UpstreamTap {
  /** Before the call leaves; a RailError thrown here stops it, as a refused connection would. */
  beforeCall?(request: UpstreamRequest): void;
  /** After an answer arrived; not after a timeout or a connection failure. */
  answered?(request: UpstreamRequest, response: { status: number; contentType: string | null; text: string }): void;
}
