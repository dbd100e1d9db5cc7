/**
 * Small fetch wrappers for tests over real HTTP, and assertions on the error envelope
 * (docs/errors.md).
 */
import assert from 'node:assert/strict';

export interface JsonResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string; headers?: Record<string, string>; json?: unknown; body?: string } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (metrics text); the caller reads `text`.
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** The response is the error envelope with this status, type and code, and has a request id. */
export function assertError(response: JsonResponse, expected: { status: number; type: string; code?: string | null; param?: string | null }): void {
  assert.equal(response.status, expected.status, `status of ${response.text}`);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.match(response.headers.get('x-gateway-request-id') ?? '', /^req_[0-9a-z]+$/);
  const error = (response.body as { error?: Record<string, unknown> }).error;
  assert.ok(error && typeof error === 'object', `envelope in ${response.text}`);
  assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(typeof error.message, 'string');
  assert.equal(error.type, expected.type);
  if (expected.code !== undefined) assert.equal(error.code, expected.code);
  if (expected.param !== undefined) assert.equal(error.param, expected.param);
}
