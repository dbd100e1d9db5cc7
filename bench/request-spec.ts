/** One HTTP request a workload sends, the same way to every target (only the origin differs). */
export interface RequestSpec {
  readonly method: 'GET' | 'POST';
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** Where a request goes: its origin (`http://127.0.0.1:port`) and what it sends. */
export interface Endpoint {
  readonly origin: string;
  readonly request: RequestSpec;
}
