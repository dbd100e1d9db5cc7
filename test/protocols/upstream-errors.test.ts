/**
 * The error shapes providers really send, in bodies and in streams, nested and flat, mapped once
 * (docs/errors.md, "Upstream errors"): the provider's message reaches the client without the
 * operator's keys or account ids, the status follows the meaning, and an account out of quota or
 * credit is a 503 that falls back to another endpoint but tells the client not to retry.
 *
 * Shapes: the OpenAI Responses `error` event as the API sends it (fields nested in `error`, with a
 * `sequence_number`) and `response.failed` (https://platform.openai.com/docs/api-reference/responses-streaming),
 * OpenAI's quota error body (https://platform.openai.com/docs/guides/error-codes), Anthropic's error
 * event and its `billing_error` (https://docs.anthropic.com/en/api/errors), Gemini's error body with
 * its QuotaFailure details (https://ai.google.dev/gemini-api/docs/troubleshooting).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { StreamEvent } from '../../src/canonical/index.ts';
import type { GatewayError } from '../../src/core/errors.ts';
import { redactProviderMessage } from '../../src/core/provider-message.ts';
import { parseAnthropicError } from '../../src/protocols/anthropic/errors.ts';
import { createAnthropicStreamDecoder } from '../../src/protocols/anthropic/stream.ts';
import { parseGeminiError } from '../../src/protocols/gemini/errors.ts';
import { parseChatError } from '../../src/protocols/openai-chat/errors.ts';
import { createChatStreamDecoder } from '../../src/protocols/openai-chat/stream.ts';
import { createResponsesStreamDecoder } from '../../src/protocols/openai-responses/stream.ts';
import { decodeSse } from '../simulators/fixtures.ts';

const QUOTA_MESSAGE = 'You exceeded your current quota, please check your plan and billing details.';

function errorOf(events: readonly StreamEvent[]): GatewayError {
  const last = events.at(-1);
  assert.equal(last?.type, 'error');
  return (last as Extract<StreamEvent, { type: 'error' }>).error;
}

function facts(error: GatewayError) {
  return { status: error.status, code: error.code, retryable: error.retryable, clientMayRetry: error.clientMayRetry };
}

const EXHAUSTED = { status: 503, code: 'upstream_unavailable', retryable: true, clientMayRetry: false };

const sse = (...events: object[]) => events.map((data) => `event: ${(data as { type: string }).type}\ndata: ${JSON.stringify(data)}\n\n`).join('');

describe('OpenAI Responses stream errors', () => {
  const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', model: 'gpt-5', status: 'in_progress' } };

  test('an error event nests its fields: the provider message and the quota meaning are read from `error`', async () => {
    const events = await decodeSse(
      createResponsesStreamDecoder(),
      sse(created, {
        type: 'error',
        sequence_number: 1,
        error: { type: 'insufficient_quota', code: 'insufficient_quota', message: QUOTA_MESSAGE, param: null },
      }),
    );
    const error = errorOf(events);
    assert.deepEqual(facts(error), EXHAUSTED);
    assert.match(error.message, /check your plan and billing details/);
  });

  test('the flat error event of older servers, and the response.failed after an error is not read again', async () => {
    const events = await decodeSse(
      createResponsesStreamDecoder(),
      sse(
        created,
        {
          type: 'error',
          sequence_number: 1,
          code: 'rate_limit_exceeded',
          message: 'Rate limit reached for gpt-5 in organization org-AbCdEf123456 on tokens per min.',
          param: null,
        },
        { type: 'response.failed', sequence_number: 2, response: { id: 'resp_1', status: 'failed', error: { code: 'server_error', message: 'other' } } },
      ),
    );
    assert.equal(events.filter((event) => event.type === 'error').length, 1);
    const error = errorOf(events);
    assert.deepEqual(facts(error), { status: 429, code: 'upstream_rate_limited', retryable: true, clientMayRetry: true });
    assert.match(error.message, /in organization \[organization\] on tokens per min/);
    assert.doesNotMatch(error.message, /AbCdEf123456/);
  });

  test('response.failed alone: its response error by code (a client code is a 400, a server error retryable)', async () => {
    const failed = (code: string, message: string) =>
      decodeSse(
        createResponsesStreamDecoder(),
        sse(created, { type: 'response.failed', sequence_number: 1, response: { id: 'resp_1', status: 'failed', error: { code, message } } }),
      );
    const invalid = errorOf(await failed('invalid_prompt', 'Invalid prompt: flagged.'));
    assert.deepEqual(facts(invalid), { status: 400, code: 'upstream_error', retryable: false, clientMayRetry: false });
    assert.match(invalid.message, /Invalid prompt: flagged/);
    const server = errorOf(await failed('server_error', 'The server had an error.'));
    assert.deepEqual(facts(server), { status: 502, code: 'upstream_error', retryable: true, clientMayRetry: true });
  });
});

describe('OpenAI chat errors', () => {
  test('a 429 insufficient_quota body is the operator account, not a rate limit', () => {
    const error = parseChatError(
      429,
      {},
      JSON.stringify({ error: { message: QUOTA_MESSAGE, type: 'insufficient_quota', param: null, code: 'insufficient_quota' } }),
    );
    assert.deepEqual(facts(error), EXHAUSTED);
  });

  test('a key quoted in a 401 never reaches the client; a mid-stream error chunk as a bare string', async () => {
    const error = parseChatError(
      401,
      {},
      JSON.stringify({ error: { message: 'Incorrect API key provided: sk-proj-****abcd.', type: 'invalid_request_error', code: 'invalid_api_key' } }),
    );
    assert.doesNotMatch(error.message, /sk-proj/);
    const events = await decodeSse(createChatStreamDecoder(), `data: ${JSON.stringify({ error: 'The model is overloaded.' })}\n\n`);
    assert.match(errorOf(events).message, /The model is overloaded/);
  });
});

describe('Anthropic errors', () => {
  test('an overloaded error event right after message_start: retryable, and no output counted', async () => {
    const events = await decodeSse(
      createAnthropicStreamDecoder(),
      sse(
        {
          type: 'message_start',
          message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 12, output_tokens: 1 } },
        },
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ),
    );
    const usage = events.find((event) => event.type === 'usage');
    assert.equal(usage?.type === 'usage' && usage.usage.outputTokens, 0);
    assert.deepEqual(facts(errorOf(events)), { status: 503, code: 'upstream_unavailable', retryable: true, clientMayRetry: true });
  });

  test('a billing error, in a stream or as the 400 of a low credit balance, is the operator account', async () => {
    const events = await decodeSse(createAnthropicStreamDecoder(), sse({ type: 'error', error: { type: 'billing_error', message: 'Billing issue.' } }));
    assert.deepEqual(facts(errorOf(events)), EXHAUSTED);
    const lowCredit = parseAnthropicError(
      400,
      {},
      JSON.stringify({
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
        },
      }),
    );
    assert.deepEqual(facts(lowCredit), EXHAUSTED);
    const bad = parseAnthropicError(
      400,
      {},
      JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } }),
    );
    assert.deepEqual(facts(bad), { status: 400, code: 'upstream_error', retryable: false, clientMayRetry: false });
  });

  test('an error event of a wrong shape is still a clean upstream error', async () => {
    for (const data of [{ type: 'error' }, { type: 'error', error: 'text' }, { type: 'error', error: { type: 5, message: ['x'] } }]) {
      const error = errorOf(await decodeSse(createAnthropicStreamDecoder(), sse(data)));
      assert.equal(error.status, 502);
    }
  });
});

describe('Gemini errors', () => {
  const quota = (quotaId: string) =>
    JSON.stringify({
      error: {
        code: 429,
        message: "Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, consumer 'projects/123456789012'.",
        status: 'RESOURCE_EXHAUSTED',
        details: [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generate_content_free_tier_requests', quotaId }] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '36s' },
        ],
      },
    });

  test("a day's quota is the operator account; a minute's is a rate limit with its delay; the project number is not passed on", () => {
    const day = parseGeminiError(429, {}, quota('GenerateRequestsPerDayPerProjectPerModel-FreeTier'));
    assert.deepEqual(facts(day), EXHAUSTED);
    assert.doesNotMatch(day.message, /123456789012/);
    const minute = parseGeminiError(429, {}, quota('GenerateRequestsPerMinutePerProjectPerModel-FreeTier'));
    assert.deepEqual([minute.status, minute.code, minute.retryAfterSeconds], [429, 'upstream_rate_limited', 36]);
  });
});

describe('redactProviderMessage', () => {
  test('keys, organizations, projects and account ids are marked; the rest of the message stays', () => {
    assert.equal(
      redactProviderMessage(
        'Key sk-ant-api03-AbC_dEf-123 of org-XyZ123abc in proj_Q1w2e3r4 (projects/my-proj, 1b4e28ba-2fa1-11d2-883f-0016d3cca427) with AIzaSyA-1234567890abcdef',
      ),
      'Key [key] of [organization] in [project] (projects/[project], [id]) with [key]',
    );
    assert.equal(redactProviderMessage('Overloaded'), 'Overloaded');
    assert.equal(redactProviderMessage('x'.repeat(600)).length, 501);
  });
});
