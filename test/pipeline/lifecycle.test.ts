/**
 * The life of one request after it is accepted: the request log row it leaves (for plain, streamed
 * and rejected calls), and a client that disconnects mid-stream — the upstream is aborted and the
 * request is settled exactly once, for what was produced.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { queryObjects } from 'node:v8';
import type { FastifyRequest } from 'fastify';
import type { GatewayAuthenticator } from '../../src/auth/authenticator.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';
import { encodeChatCompletion } from '../../src/dialects/chat/encode.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { PipelineStream, streamText } from '../../src/pipeline/text-stream.ts';
import { REQUEST_LOG_LIFETIME_MS } from '../../src/pipeline/request-log.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { endpoint, eventually, flushRequestLog, ledger, model, newCharges, simulatedConfig } from '../chat/helpers.ts';

const config = simulatedConfig(
  [
    model('gateway/quick', [endpoint('sim-quick', { capabilities: { streaming: true, sampling: false } })]),
    model('gateway/slow', [endpoint('sim-slow', { provider: 'slow' })]),
  ],
  {
    providers: [
      { id: 'sim', kind: 'simulated', simulated: { chunk_delay_ms: 0 } },
      { id: 'slow', kind: 'simulated', simulated: { chunk_delay_ms: 25 } },
    ],
  },
);

const LONG_PROMPT = Array.from({ length: 48 }, (_, index) => `word${index}`).join(' ');

describe('request lifecycle', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ config });
  });
  after(() => gateway.close());

  const post = (body: Record<string, unknown>) => call(gateway.baseUrl, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: body });
  const row = async (requestId: string | null) => {
    await flushRequestLog(gateway);
    const record = await gateway.store.getRequest(requestId!);
    assert.ok(record, `request log row for ${requestId}`);
    return record;
  };

  test('a completed request leaves one row with its usage, cost and the JSON the client received', async () => {
    const before = await ledger(gateway);
    const response = await post({ model: 'gateway/quick', messages: [{ role: 'user', content: 'log me' }] });
    assert.equal(response.status, 200);
    const requestId = response.headers.get('x-gateway-request-id');
    const record = await row(requestId);
    const [charge] = await newCharges(gateway, before);
    assert.equal(record.route, 'chat');
    assert.equal(record.owner.id, gateway.account.id);
    assert.equal(record.model, 'gateway/quick');
    assert.equal(record.provider, 'sim');
    assert.equal(record.upstreamModel, 'sim-quick');
    assert.equal(record.status, 'completed');
    assert.equal(record.httpStatus, 200);
    assert.equal(record.stream, false);
    assert.equal(record.inputTokens, response.body.usage.prompt_tokens);
    assert.equal(record.outputTokens, response.body.usage.completion_tokens);
    assert.equal(record.cost, charge.amount);
    assert.equal(record.errorCode, null);
    assert.deepEqual(record.output, response.body);
    assert.equal(record.expiresAt, record.createdAt + REQUEST_LOG_LIFETIME_MS);
    assert.ok(record.durationMs >= 0);
  });

  test('a streamed request’s row holds the assembled completion', async () => {
    const response = await post({ model: 'gateway/quick', stream: true, messages: [{ role: 'user', content: 'stream and log me' }] });
    const record = await eventually(() => row(response.headers.get('x-gateway-request-id')));
    assert.equal(record.stream, true);
    assert.equal(record.status, 'completed');
    assert.ok(record.firstByteMs !== null);
    const output = record.output as { object: string; choices: Array<{ message: { content: string }; finish_reason: string }> };
    assert.equal(output.object, 'chat.completion');
    assert.match(output.choices[0].message.content, /stream and log me/);
    assert.equal(output.choices[0].finish_reason, 'stop');
  });

  test('a finished stream leaves nothing of itself in memory', async () => {
    // queryObjects collects garbage first: what it counts is still referenced from somewhere.
    const live = () => queryObjects(PipelineStream, { format: 'count' });
    const before = live();
    for (let index = 0; index < 20; index += 1) {
      const response = await post({ model: 'gateway/quick', stream: true, messages: [{ role: 'user', content: `stream ${index}` }] });
      assert.equal(response.status, 200);
    }
    await flushRequestLog(gateway);
    await eventually(async () => assert.ok(live() <= before, `${live() - before} of 20 finished streams still referenced`));
  });

  test('a streamed request’s row keeps the logprobs the client was sent', async () => {
    const body = { model: 'gateway/quick', logprobs: true, messages: [{ role: 'user', content: 'weigh these words' }] };
    const plain = await post(body);
    assert.equal(plain.status, 200);
    const streamed = await post({ ...body, stream: true });
    const record = await eventually(() => row(streamed.headers.get('x-gateway-request-id')));
    const output = record.output as { choices: Array<{ logprobs: { content: unknown[] } | null }> };
    assert.ok(plain.body.choices[0].logprobs.content.length > 0);
    assert.deepEqual(output.choices[0].logprobs?.content, plain.body.choices[0].logprobs.content);
  });

  test('a rejected request leaves a failed row with its status and code, and no cost', async () => {
    const response = await post({ model: 'gateway/quick', temperature: 1, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(response.status, 400);
    const record = await row(response.headers.get('x-gateway-request-id'));
    assert.equal(record.status, 'failed');
    assert.equal(record.httpStatus, 400);
    assert.equal(record.errorCode, 'unsupported_parameter');
    assert.equal(record.cost, 0n);
  });

  test('a request refused before the pipeline (schema, decoding) still leaves a failed row; an unauthenticated one leaves none', async () => {
    const recorded: string[] = [];
    const recordRequests = gateway.store.recordRequests.bind(gateway.store);
    gateway.store.recordRequests = (records) => {
      recorded.push(...records.map((record) => record.id));
      return recordRequests(records);
    };
    try {
      const schema = await post({ model: 'gateway/quick', stream: true, n: 2, messages: [{ role: 'user', content: 'x' }] });
      assert.equal(schema.status, 400);
      const schemaRow = await row(schema.headers.get('x-gateway-request-id'));
      assert.deepEqual(
        [schemaRow.status, schemaRow.httpStatus, schemaRow.errorCode, schemaRow.stream, schemaRow.model, schemaRow.cost],
        ['failed', 400, schema.body.error.code, true, null, 0n],
      );
      assert.equal(schemaRow.owner.id, gateway.account.id);

      const decoded = await post({ model: 'gateway/quick', top_logprobs: 2, messages: [{ role: 'user', content: 'x' }] });
      assert.equal(decoded.status, 400);
      assert.equal((await row(decoded.headers.get('x-gateway-request-id'))).errorCode, decoded.body.error.code);

      const anonymous = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', { json: { model: 'gateway/quick', messages: [] } });
      assert.equal(anonymous.status, 401);
      await flushRequestLog(gateway);
      assert.equal(await gateway.store.getRequest(anonymous.headers.get('x-gateway-request-id')!), null);

      // The pipeline's own refusals are written by the pipeline alone, once.
      const policy = await post({ model: 'gateway/quick', temperature: 1, messages: [{ role: 'user', content: 'x' }] });
      const policyId = policy.headers.get('x-gateway-request-id')!;
      await row(policyId);
      assert.equal(recorded.filter((id) => id === policyId).length, 1);
    } finally {
      gateway.store.recordRequests = recordRequests;
    }
  });

  test('a client that disconnects mid-stream is charged once, for what was streamed', async () => {
    const full = await post({ model: 'gateway/slow', messages: [{ role: 'user', content: LONG_PROMPT }] });
    const fullOutput: number = full.body.usage.completion_tokens;
    const before = await ledger(gateway);
    const controller = new AbortController();
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gateway/slow',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: LONG_PROMPT }],
      }),
    });
    const requestId = response.headers.get('x-gateway-request-id');
    const reader = response.body!.getReader();
    let received = '';
    while (!received.includes('"content":"This')) received += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    await reader.cancel().catch(() => undefined);

    const charges = await eventually(async () => {
      const found = await newCharges(gateway, before);
      assert.equal(found.length, 1);
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
      return found;
    });
    const record = await eventually(() => row(requestId));
    assert.equal(record.status, 'cancelled');
    assert.equal(record.httpStatus, 200, 'the status line the client received before it left');
    assert.equal(record.cost, charges[0].amount);
    assert.ok(record.outputTokens > 0 && record.outputTokens < fullOutput, `${record.outputTokens} of ${fullOutput} output tokens`);
    assert.equal(record.inputTokens, full.body.usage.prompt_tokens);
    // Nothing more is charged later: the upstream was stopped and the reservation is closed.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await newCharges(gateway, before)).length, 1);
  });

  test('a stream whose client is gone before its first event was read is settled at once, not at expiry', async () => {
    const before = await ledger(gateway);
    const auth = await (gateway.deps.authenticator as GatewayAuthenticator).authenticate({
      headers: { authorization: `Bearer ${gateway.apiKey}` },
    } as FastifyRequest);
    const { request, names } = decodeChatRequest({ model: 'gateway/slow', stream: true, messages: [{ role: 'user', content: 'never read' }] });
    const client = new AbortController();
    const pipeline = new Pipeline(gateway.deps);
    try {
      const requestId = timeOrderedId('req');
      const run = await streamText(pipeline, { request, names, auth, requestId, route: 'chat', signal: client.signal }, encodeChatCompletion);
      assert.ok((await ledger(gateway)).balance.reserved > 0n, 'the stream holds its reservation');
      client.abort();
      await eventually(async () => assert.equal((await ledger(gateway)).balance.reserved, 0n));
      assert.equal(run.settlement?.usage.outputTokens, 0, 'nothing was sent, so no output is billed');
      assert.ok((await newCharges(gateway, before)).length <= 1);
      await pipeline.flush();
      const record = await gateway.store.getRequest(requestId);
      assert.equal(record?.status, 'cancelled');
      assert.equal(record?.httpStatus, 499, 'nothing was sent to the client');
    } finally {
      await pipeline.close();
    }
  });
});
