/**
 * Small request wrappers for tests, over real HTTP or through Fastify's inject, and assertions on
 * the error envelope (docs/errors.md).
 */
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

export interface JsonResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

/**
 * Where a request goes: a base URL (`http://127.0.0.1:PORT`) over a real socket, or a test
 * gateway's app through Fastify's inject — the same routes, hooks and serializers without a socket,
 * for tests of a JSON answer. Streams, slow or vanishing clients, connection limits and the SDK
 * clients keep the socket.
 */
export type Target = string | FastifyInstance;

export async function call<T = any>(
  target: Target,
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
  const raw = typeof target === 'string' ? await overSocket(target, method, path, headers, body) : await injected(target, method, path, headers, body);
  let parsed: unknown = raw.text;
  try {
    parsed = JSON.parse(raw.text);
  } catch {
    // Not JSON (metrics text); the caller reads `text`.
  }
  return { ...raw, body: parsed as T };
}

type RawResponse = Pick<JsonResponse, 'status' | 'headers' | 'text'>;

async function overSocket(baseUrl: string, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<RawResponse> {
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function injected(app: FastifyInstance, method: string, path: string, headers: Record<string, string>, body: string | undefined): Promise<RawResponse> {
  const response = await app.inject({ method: method as 'GET', url: path, headers, payload: body });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    for (const each of Array.isArray(value) ? value : [value]) if (each !== undefined) responseHeaders.append(name, String(each));
  }
  return { status: response.statusCode, headers: responseHeaders, text: response.body };
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
