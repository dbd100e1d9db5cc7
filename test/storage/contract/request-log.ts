import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { timeOrderedId } from '../../../src/core/ids.ts';
import { JsonText } from '../../../src/core/json-text.ts';
import { MAX_ROW_ATTEMPTS, RequestLogWriter } from '../../../src/pipeline/request-log.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import type { OwnerRef, RequestLogRecord, RequestStatus } from '../../../src/storage/store.ts';
import { metricValue } from '../../helpers/metrics.ts';
import { newAccount, type ContractContext } from './context.ts';

export function record(owner: OwnerRef, overrides: Partial<RequestLogRecord> = {}): RequestLogRecord {
  return {
    id: timeOrderedId('req'),
    owner,
    keyId: 'key_test',
    route: 'chat',
    model: 'model-a',
    provider: 'simulated',
    upstreamModel: 'sim-a',
    status: 'completed',
    httpStatus: 200,
    stream: false,
    inputTokens: 10,
    cacheReadTokens: 2,
    cacheWriteTokens: 1,
    cacheWrite1hTokens: null,
    outputTokens: 20,
    reasoningTokens: 5,
    searchUnits: 0,
    cost: 1_000n,
    overHold: 0n,
    errorCode: null,
    createdAt: 5_000,
    durationMs: 42,
    firstByteMs: 7,
    output: { id: 'chatcmpl-1', choices: [{ message: { role: 'assistant', content: 'hi' } }] },
    canonicalRequest: { model: 'model-a', messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], stream: false },
    blobKeys: [],
    attempts: [
      {
        provider: 'down',
        upstreamModel: 'sim-a',
        startMs: 0,
        outcome: 'failed',
        firstByteMs: null,
        durationMs: 3,
        status: 503,
        errorCode: 'upstream_overloaded',
        message: 'busy',
      },
      { provider: 'simulated', upstreamModel: 'sim-a', startMs: 4, outcome: 'served', firstByteMs: 7, durationMs: 38 },
    ],
    expiresAt: 100_000,
    providerUsage: null,
    images: 0,
    videoSeconds: 0,
    cacheSavings: 0n,
    ...overrides,
  };
}

export function requestLogContract({ store, peer }: ContractContext): void {
  describe('request log', () => {
    test('records round-trip exactly, outputs and blob keys included', async () => {
      const owner = await newAccount(store());
      const full = record(owner, {
        cost: 2n ** 62n + 3n,
        overHold: 2n ** 62n + 5n,
        blobKeys: ['outputs/a/0.png', 'outputs/a/1.png'],
        cacheWriteTokens: 30,
        cacheWrite1hTokens: 20,
        // As a provider wrote it: its own names, nesting, nulls and numbers kept.
        providerUsage: { input_tokens: 12, output_tokens: 7, cache_creation: { ephemeral_1h_input_tokens: 20 }, service_tier: 'standard', inference_geo: null },
      });
      const failed = record(owner, {
        route: 'images.generations',
        model: null,
        provider: null,
        upstreamModel: null,
        status: 'failed',
        httpStatus: 502,
        stream: true,
        cost: 0n,
        errorCode: 'upstream_error',
        firstByteMs: null,
        output: null,
        canonicalRequest: null,
      });
      const text = record(owner, { output: 'a summary, not JSON' });
      await store().recordRequests([full, failed, text]);
      assert.deepEqual(await peer().getRequest(full.id), full);
      assert.deepEqual(await peer().getRequest(failed.id), failed);
      assert.deepEqual(await peer().getRequest(text.id), text);
      assert.equal(await store().getRequest('req_missing'), null);
      await store().recordRequests([]);
    });

    test('the 1-hour part of the cache writes: none, some or all of them, or unknown (NULL)', async () => {
      const owner = await newAccount(store());
      const rows = [0, 7, 30, null].map((cacheWrite1hTokens) => record(owner, { cacheWriteTokens: 30, cacheWrite1hTokens }));
      await store().recordRequests(rows);
      for (const row of rows) assert.deepEqual(await peer().getRequest(row.id), row);
      // A part larger than the whole, or negative, is refused by both engines.
      for (const cacheWrite1hTokens of [31, -1]) {
        const inconsistent = record(owner, { cacheWriteTokens: 30, cacheWrite1hTokens });
        await assert.rejects(store().recordRequests([inconsistent]));
        assert.equal(await peer().getRequest(inconsistent.id), null);
      }
    });

    test('an output given as JSON text is stored as that JSON, not as a string', async () => {
      const owner = await newAccount(store());
      const output = { id: 'chatcmpl-2', choices: [{ message: { role: 'assistant', content: 'serialized once' } }] };
      const serialized = record(owner, { output: JsonText.of(output) });
      await store().recordRequests([serialized]);
      assert.deepEqual(await peer().getRequest(serialized.id), { ...serialized, output });
    });

    test('outputs holding NUL and unpaired surrogates are stored exactly, as values, as JSON text and as strings', async () => {
      const owner = await newAccount(store());
      const hostile = {
        id: 'chatcmpl-\u0000',
        choices: [{ message: { role: 'assistant', content: 'evil \u0000 \ud800 \udfff \ud83d\ude00 "\\u0000" \\ud800 \u0000\u0000' } }],
        'key \u0000 \udc00': ['\ud800', '\u0000'],
      };
      const value = record(owner, { output: hostile });
      const serialized = record(owner, { output: JsonText.of(hostile) });
      const summary = record(owner, { output: 'summary \u0000 \ud800 \udbff' });
      const beside = record(owner);
      // The prompt a model repeated is as hostile in the canonical request kept beside the output.
      const asked = record(owner, { canonicalRequest: hostile });
      const askedAsText = record(owner, { canonicalRequest: JsonText.of(hostile) });
      await store().recordRequests([value, serialized, summary, beside, asked, askedAsText]);
      assert.deepEqual(await peer().getRequest(value.id), value);
      assert.deepEqual(await peer().getRequest(serialized.id), { ...serialized, output: hostile });
      assert.deepEqual(await peer().getRequest(asked.id), asked);
      assert.deepEqual(await peer().getRequest(askedAsText.id), { ...askedAsText, canonicalRequest: hostile });
      assert.deepEqual(await peer().getRequest(summary.id), summary);
      assert.deepEqual(await peer().getRequest(beside.id), beside);
    });

    test('a batch holding a row the store refuses loses only that row, after its last try', async () => {
      const owner = await newAccount(store());
      const registry = new Registry();
      const writer = new RequestLogWriter(store(), silentLogger, registry);
      // The status CHECK constraint refuses this row in both engines.
      const refused = record(owner, { status: 'lost' as RequestStatus });
      const others = [record(owner), record(owner, { output: { content: 'evil \u0000 \ud800' } }), record(owner)];
      for (const row of [others[0], refused, others[1], others[2]]) writer.add(row);
      await writer.flush();
      for (const row of others) assert.deepEqual(await peer().getRequest(row.id), row);
      assert.equal(await peer().getRequest(refused.id), null);
      assert.equal(metricValue(await registry.metrics(), 'gateway_request_log_rows_held'), 1);
      for (let attempt = 1; attempt < MAX_ROW_ATTEMPTS; attempt++) await writer.flush();
      assert.equal(metricValue(await registry.metrics(), 'gateway_request_log_rows_held'), 0);
      assert.equal(metricValue(await registry.metrics(), 'gateway_request_log_rows_dropped_total', { reason: 'refused' }), 1);
      assert.equal(metricValue(await registry.metrics(), 'gateway_request_log_write_failures_total', { reason: 'refused' }), 1 + MAX_ROW_ATTEMPTS);
      assert.equal(await peer().getRequest(refused.id), null);
    });

    test('a record written twice keeps its first version', async () => {
      const owner = await newAccount(store());
      const first = record(owner);
      await store().recordRequests([first]);
      await store().recordRequests([{ ...first, status: 'failed' }, record(owner)]);
      assert.equal((await store().getRequest(first.id))?.status, 'completed');
    });

    test('usage summary groups by model since a time, counting all input tokens, served and refused requests apart, and what went beyond holds', async () => {
      const owner = await newAccount(store());
      const other = await newAccount(store());
      const refusal = {
        status: 'failed',
        cost: 0n,
        inputTokens: 0,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 0,
        reasoningTokens: 0,
        output: null,
      } as const;
      await store().recordRequests([
        record(owner, { model: 'model-b', createdAt: 1_000, cost: 5n }),
        record(owner, { model: 'model-a', createdAt: 2_000, cost: 7n }),
        record(owner, { model: 'model-a', createdAt: 3_000, cost: 9n, inputTokens: 100, outputTokens: 1, overHold: 2n ** 62n }),
        // A stream that broke off after it began: served (its status line was 200) and charged.
        record(owner, { model: 'model-b', createdAt: 3_000, cost: 3n, status: 'failed', errorCode: 'upstream_error', overHold: 4n }),
        record(owner, { ...refusal, model: 'model-a', createdAt: 3_000, httpStatus: 402, errorCode: 'insufficient_quota' }),
        record(owner, { ...refusal, model: null, createdAt: 3_000, httpStatus: 404, errorCode: 'model_not_found' }),
        record(owner, { ...refusal, model: null, createdAt: 3_000, httpStatus: 502, errorCode: 'upstream_error' }),
        record(owner, { model: 'model-a', createdAt: 999, cost: 1_000n }),
        record(other, { model: 'model-a', createdAt: 2_000, cost: 1_000n }),
      ]);
      assert.deepEqual(await store().usageSummary(owner, 1_000), [
        { model: 'model-a', requests: 2, refusedRequests: 1, inputTokens: 13 + 103, outputTokens: 21, cost: 16n, overHoldRequests: 1, overHold: 2n ** 62n },
        { model: 'model-b', requests: 2, refusedRequests: 0, inputTokens: 26, outputTokens: 40, cost: 8n, overHoldRequests: 1, overHold: 4n },
        { model: null, requests: 0, refusedRequests: 2, inputTokens: 0, outputTokens: 0, cost: 0n, overHoldRequests: 0, overHold: 0n },
      ]);
      assert.deepEqual(await store().usageSummary(owner, 10_000), []);
    });

    test('expired rows are deleted', async () => {
      const owner = await newAccount(store());
      await store().deleteExpiredRequests(Number.MAX_SAFE_INTEGER);
      const old = record(owner, { expiresAt: 1_000 });
      const edge = record(owner, { expiresAt: 2_000 });
      const fresh = record(owner, { expiresAt: 3_000 });
      await store().recordRequests([old, edge, fresh]);
      assert.equal(await store().deleteExpiredRequests(2_000), 1);
      assert.equal(await store().getRequest(old.id), null);
      assert.ok(await store().getRequest(edge.id));
      assert.ok(await store().getRequest(fresh.id));
    });
  });
}
