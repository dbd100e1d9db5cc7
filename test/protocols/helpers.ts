/**
 * Builders shared by the protocol tests: canonical requests, and the canonical results and stream
 * events a fixture must decode to, written compactly so that a test states only what differs; and
 * the end-to-end check of a parameter an upstream cannot express.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import type {
  AssistantContentPart,
  CanonicalRequest,
  CanonicalResult,
  Finish,
  FinishReason,
  OpaqueProviderData,
  StreamBatch,
  StreamEvent,
  Usage,
} from '../../src/canonical/index.ts';
import { SINGLE_MODEL, type ChatEndToEndContext } from '../simulators/chat-e2e.ts';
import { readJsonFixture } from '../simulators/fixtures.ts';
import type { ErrorCode } from '../../src/core/errors.ts';
import { fieldRef, RejectedParameter, type PolicyField } from '../../src/policy/violation.ts';

/** A chat-dialect request with one user turn saying `text`; `fields` override the rest. */
export function canonicalRequest(fields: Partial<CanonicalRequest> = {}, text = 'Hi'): CanonicalRequest {
  return {
    dialect: 'chat',
    model: 'alias',
    fallbackModels: [],
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    stream: false,
    ...fields,
  };
}

/** Every event of a stream, its batches taken apart. */
export async function collect(batches: AsyncIterable<StreamBatch>): Promise<StreamEvent[]> {
  const all: StreamEvent[] = [];
  for await (const batch of batches) all.push(...batch);
  return all;
}

/** A tool with one string parameter; the simulators call it with `{"city":"sample"}`. */
export const WEATHER_TOOL = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

/** Usage with the input and output a test names; the other counts 0 unless given. */
export function usage(inputTokens: number, outputTokens: number, counts: Partial<Usage> = {}): Usage {
  return { inputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens, reasoningTokens: 0, ...counts };
}

export function finish(reason: FinishReason, raw: string): Finish {
  return { reason, raw };
}

/** What a response fixture decodes to: who answered (response id, model), how it ended, at which cost, and what it said. */
export function result(
  [providerResponseId, providerModel]: readonly [string, string],
  end: Finish,
  counts: Usage,
  content: AssistantContentPart[],
  more: Partial<CanonicalResult> = {},
): CanonicalResult {
  return { providerResponseId, providerModel, content, finish: end, usage: counts, ...more };
}

/**
 * One test per fixture: the parsed body equals the expected result, and its provider usage is the
 * body's own usage object (`usage`, or Gemini's `usageMetadata`) as it was written.
 */
export function responseFixtureTests(directory: string, parse: (body: unknown) => CanonicalResult, expected: Readonly<Record<string, CanonicalResult>>): void {
  for (const [fixture, result] of Object.entries(expected)) {
    test(fixture, () => {
      const body = readJsonFixture(directory, fixture) as { usage?: unknown; usageMetadata?: unknown };
      const { providerUsage, ...parsed } = parse(body);
      assert.deepEqual(parsed, result);
      assert.deepEqual(providerUsage, body.usage ?? body.usageMetadata ?? undefined);
    });
  }
}

export function startEvent(providerResponseId: string, providerModel: string): StreamEvent {
  return { type: 'start', providerResponseId, providerModel };
}

export function usageEvent(inputTokens: number, outputTokens: number, counts: Partial<Usage> = {}): StreamEvent {
  return { type: 'usage', usage: usage(inputTokens, outputTokens, counts) };
}

export function finishEvent(reason: FinishReason, raw: string): StreamEvent {
  return { type: 'finish', finish: finish(reason, raw) };
}

/** A whole text part: its start, one delta per piece, its end. */
export function textEvents(index: number, ...pieces: string[]): StreamEvent[] {
  return [...cutTextEvents(index, ...pieces), { type: 'text-end', index }];
}

/** A text part the stream broke off in: its start and deltas, never its end. */
export function cutTextEvents(index: number, ...pieces: string[]): StreamEvent[] {
  return [{ type: 'text-start', index }, ...pieces.map((text): StreamEvent => ({ type: 'text-delta', index, text }))];
}

/** A whole reasoning part, its signature (when the wire gives one) on the end. */
export function reasoningEvents(index: number, pieces: readonly string[], signature?: OpaqueProviderData): StreamEvent[] {
  return [
    { type: 'reasoning-start', index },
    ...pieces.map((text): StreamEvent => ({ type: 'reasoning-delta', index, text })),
    { type: 'reasoning-end', index, ...(signature !== undefined && { signature }) },
  ];
}

/** A whole tool call: its start, one delta per argument fragment, its end. */
export function toolCallEvents(
  index: number,
  call: { readonly id: string; readonly name: string; readonly signature?: OpaqueProviderData },
  ...fragments: string[]
): StreamEvent[] {
  return [
    { type: 'tool-call-start', index, ...call },
    ...fragments.map((argumentsDelta): StreamEvent => ({ type: 'tool-call-delta', index, argumentsDelta })),
    { type: 'tool-call-end', index },
  ];
}

/** A malformed or cut upstream body, as `comparable` reduces the error event: retryable, a 502. */
export const UPSTREAM_FAULT = { type: 'error', status: 502, code: 'upstream_error', retryable: true };

/**
 * Spec chat rule 3: an explicit parameter the upstream cannot express is refused with 400
 * unsupported_parameter naming it (as one of `params`), and nothing is sent upstream.
 */
export async function assertRefusedBeforeUpstream(
  { client, primary }: ChatEndToEndContext,
  fields: Record<string, unknown>,
  params: readonly string[],
): Promise<void> {
  const before = primary.requests.length;
  await assert.rejects(
    client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      ...fields,
    } as OpenAI.ChatCompletionCreateParamsNonStreaming),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 400);
      assert.equal(error.code, 'unsupported_parameter');
      assert.ok(params.includes(String(error.param)), `param ${error.param}`);
      return true;
    },
  );
  assert.equal(primary.requests.length, before, 'nothing was sent upstream');
}

/**
 * Matches what a protocol throws for a value its wire format cannot express: a 400 with a canonical
 * reference to the field (the dialect names it; see test/chat for the names clients see).
 */
export function rejectedField(field: PolicyField, code: ErrorCode = 'unsupported_parameter'): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof RejectedParameter, `expected a rejected parameter, got ${String(error)}`);
    assert.equal(error.status, 400);
    assert.equal(error.code, code);
    assert.deepEqual(error.violation.ref, fieldRef(field));
    return true;
  };
}
