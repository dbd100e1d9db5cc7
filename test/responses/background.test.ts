/**
 * Background responses on one instance, on both stores (docs/responses.md, docs/jobs.md): the
 * queued answer (JSON even for a stream) and its Idempotency-Key replay; the live status while a job
 * waits and runs, and the backlog in /metrics; cancelling a waiting job (never sent upstream) and a
 * running one; 404 for another owner's, an unknown and an expired job; 409 for a response answered
 * in its request; a job whose worker died before sending it upstream is run again, one that died
 * after is failed and refunded; ended jobs whose hold was left open are charged or released. The
 * upstream is an OpenAI-protocol simulator that holds calls on demand. The workers run one job at a
 * time here, so a second job waits behind a held one.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { usdToPicos } from '../../src/core/money.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { chargedOnce, eventually, flushRequestLog, ledger, newCharges } from '../chat/helpers.ts';
import { requestIdOf } from '../../src/dialects/responses/response-id.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { RESPONSE_RUNNING, untilEnded } from '../helpers/jobs.ts';
import { metricValue } from '../helpers/metrics.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';

const MODEL = 'gateway/background';
const UPSTREAM_KEY = 'sk-background';
/** An upstream call that only a cancel ends within the test. */
const HELD_CALL = { kind: 'delay', ms: 20_000 } as const;

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`background responses (${engine})`, () => {
    let upstream: OpenAIChatSimulator;
    let gateway: TestGateway;
    let stranger: string;
    before(async () => {
      upstream = await startOpenAIChatSimulator({ apiKey: UPSTREAM_KEY });
      const config = {
        ...chatModelsConfig({ [MODEL]: [{ id: 'upstream', kind: 'openai', baseUrl: upstream.baseUrl, apiKeyEnv: 'UPSTREAM_KEY', timeoutMs: 60_000 }] }),
        jobs: { concurrency: 1, lease_seconds: 2, poll_interval_ms: 50 },
      };
      gateway = await startGateway({ engine, config, env: { UPSTREAM_KEY } });
      const account = await gateway.store.createAccount({ name: 'stranger' });
      const owner: OwnerRef = { kind: 'account', id: account.id };
      await gateway.store.addCredit(owner, usdToPicos('10'));
      stranger = await gateway.createKey({ owner });
    });
    after(async () => {
      await gateway.close();
      await upstream.close();
    });
    beforeEach(() => upstream.setDefault({ kind: 'normal' }));

    const submit = async (input: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
      const queued = await call(gateway.baseUrl, 'POST', '/v1/responses', {
        key: gateway.apiKey,
        headers,
        json: { model: MODEL, input, background: true, ...extra },
      });
      assert.equal(queued.status, 200, queued.text);
      return queued;
    };
    const get = (id: string, key = gateway.apiKey) => call(gateway.baseUrl, 'GET', `/v1/responses/${id}`, { key });
    const cancel = (id: string, key = gateway.apiKey) => call(gateway.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key });
    const statusOf = async (id: string) => (await get(id)).body.status as string;
    const ended = (id: string) => untilEnded(async () => (await get(id)).body, RESPONSE_RUNNING, `response ${id}`, { intervalMs: 10 });
    const upstreamSaw = (count: number) => eventually(async () => assert.equal(upstream.requests.length, count, 'the upstream calls made'));
    const metrics = async () => (await fetch(`${gateway.baseUrl}/metrics`)).text();

    test('the queued object comes at once, as JSON even with stream: true; an Idempotency-Key replays it and queues nothing more', async () => {
      const before = await ledger(gateway);
      const seen = upstream.requests.length;
      const key = { 'idempotency-key': `background-${engine}` };
      const queued = await submit('hello later', { stream: true }, key);
      assert.match(queued.headers.get('content-type')!, /^application\/json/);
      assert.deepEqual([queued.body.object, queued.body.status, queued.body.background, queued.body.model], ['response', 'queued', true, MODEL]);
      const replay = await submit('hello later', { stream: true }, key);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(replay.body, queued.body);
      const final = await ended(queued.body.id);
      assert.equal(final.status, 'completed');
      assert.equal(upstream.requests.length, seen + 1, 'one job, one upstream call');
      // The worker charges right after it ends the job: the charge may trail the status by a moment.
      await chargedOnce(gateway, before, final.usage.cost);
    });

    test('a job waiting behind a running one: live statuses, the backlog in /metrics; cancelling the waiting one never sends it, cancelling the running one aborts it; nothing charged', async () => {
      const before = await ledger(gateway);
      const seen = upstream.requests.length;
      upstream.enqueue(HELD_CALL);
      const running = (await submit('held upstream')).body.id;
      await upstreamSaw(seen + 1);
      const waiting = (await submit('waits its turn')).body.id;
      assert.equal(await statusOf(running), 'in_progress');
      assert.equal(await statusOf(waiting), 'queued');
      const text = await metrics();
      assert.equal(metricValue(text, 'gateway_jobs_queued', { kind: 'response' }), 1);
      assert.equal(metricValue(text, 'gateway_jobs_running', { kind: 'response' }), 1);
      assert.ok((await ledger(gateway)).balance.reserved > 0n, 'both hold credit');

      const cancelledWaiting = await cancel(waiting);
      assert.equal(cancelledWaiting.status, 200, cancelledWaiting.text);
      assert.deepEqual([cancelledWaiting.body.id, cancelledWaiting.body.status], [waiting, 'cancelled']);
      const cancelledRunning = await cancel(running);
      assert.equal(cancelledRunning.body.status, 'cancelled');
      await eventually(async () => assert.ok(upstream.abandoned.includes(upstream.requests[seen]), 'the running call was aborted'));
      await sleep(200);
      assert.equal(upstream.requests.length, seen + 1, 'the cancelled waiting job was never sent upstream');
      const after = await ledger(gateway);
      assert.equal(after.balance.reserved, 0n);
      assert.deepEqual(await newCharges(gateway, before), []);
      assert.equal(after.balance.balance, before.balance.balance);
      for (const id of [running, waiting]) {
        assert.equal(await statusOf(id), 'cancelled');
        assertError(await cancel(id), { status: 409, type: 'invalid_request_error', code: 'invalid_state', param: null });
      }
      // Each has its request log row, the one that never ran included: cancelled, nothing charged.
      await flushRequestLog(gateway);
      for (const id of [running, waiting]) {
        const row = await gateway.store.getRequest(requestIdOf(id)!);
        assert.deepEqual([row?.status, row?.httpStatus, row?.cost], ['cancelled', 499, 0n], id);
        // As the client reads it back: the stored request of the submission.
        const stored = (await call(gateway.baseUrl, 'GET', `/v1/outputs/${requestIdOf(id)}`, { key: gateway.apiKey })).body;
        assert.deepEqual([stored.status, stored.http_status, stored.cost_usd, stored.endpoint], ['cancelled', 499, '0', '/v1/responses'], id);
      }
    });

    test('hostile text (a NUL character, a lone surrogate) is queued, run and stored like any other', async () => {
      const queued = await submit('nul \u0000 and a lone \ud800 surrogate');
      const final = await ended(queued.body.id);
      assert.equal(final.status, 'completed');
      assert.equal(final.instructions, null);
    });

    test("another owner's job, an unknown id and an expired job are 404 to GET and cancel; a response answered in its request is a 409 to cancel", async () => {
      const id = (await submit('mine')).body.id;
      assertError(await get(id, stranger), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });
      assertError(await cancel(id, stranger), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });
      assert.equal((await ended(id)).status, 'completed', "the stranger's cancel changed nothing");
      assertError(await cancel('resp_unknown'), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });

      const expired = `resp_expired_${engine}`;
      await gateway.store.createJob({
        id: expired,
        kind: 'response',
        owner: { kind: 'account', id: gateway.account.id },
        keyId: 'key_x',
        status: 'queued',
        payload: null,
        result: { id: expired, object: 'response', status: 'queued' },
        reservationId: null,
        createdAt: Date.now() - 86_400_000,
        expiresAt: Date.now() - 1,
      });
      assertError(await get(expired), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });
      assertError(await cancel(expired), { status: 404, type: 'invalid_request_error', code: 'not_found', param: null });

      const answered = await call(gateway.baseUrl, 'POST', '/v1/responses', { key: gateway.apiKey, json: { model: MODEL, input: 'now' } });
      assert.equal(answered.status, 200);
      assertError(await cancel(answered.body.id), { status: 409, type: 'invalid_request_error', code: 'invalid_state', param: null });
    });

    test('taken over from a dead worker: run again when it was never sent upstream, failed and refunded when it was; charged once in all', async () => {
      const before = await ledger(gateway);
      const seen = upstream.requests.length;
      upstream.enqueue(HELD_CALL);
      const holder = (await submit('keeps the one slot busy')).body.id;
      await upstreamSaw(seen + 1);
      const retried = (await submit('claimed by a worker that died before sending it')).body.id;
      const failed = (await submit('claimed by a worker that died after sending it')).body.id;
      // A worker that is gone: it claimed both, sent one upstream, and its leases have lapsed.
      const now = Date.now();
      assert.equal((await gateway.store.claimJob('response', 'ghost', now, now + 60_000))?.id, retried);
      assert.equal((await gateway.store.claimJob('response', 'ghost', now, now + 60_000))?.id, failed);
      assert.ok(await gateway.store.transitionJob(failed, ['in_progress'], { dispatchedAt: now, now }, 'ghost'));
      for (const id of [retried, failed]) assert.ok(await gateway.store.transitionJob(id, ['in_progress'], { leaseUntil: now - 1, now }, 'ghost'));
      const takenOver = (outcome: string) => metricValue(text, 'gateway_jobs_taken_over_total', { kind: 'response', outcome });
      let text = await metrics();
      const [retriedBefore, failedBefore] = [takenOver('retried'), takenOver('failed')];

      assert.equal((await cancel(holder)).body.status, 'cancelled');
      const rerun = await ended(retried);
      assert.equal(rerun.status, 'completed');
      const interrupted = await ended(failed);
      assert.equal(interrupted.status, 'failed');
      assert.deepEqual(interrupted.error.code, 'server_error');
      await upstreamSaw(seen + 2);
      text = await metrics();
      assert.deepEqual([takenOver('retried') - retriedBefore, takenOver('failed') - failedBefore], [1, 1]);
      await chargedOnce(gateway, before, rerun.usage.cost);
      await flushRequestLog(gateway);
      const row = await gateway.store.getRequest(requestIdOf(failed)!);
      assert.deepEqual([row?.status, row?.httpStatus, row?.errorCode, row?.cost], ['failed', 500, 'internal_error', 0n], 'the interrupted job has its row');
    });

    test('ended jobs whose instance died before finishing their hold: a completed one is charged its recorded cost, a failed one released', async () => {
      const before = await ledger(gateway);
      const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
      const longAgo = Date.now() - 10 * 60_000;
      const endedWithHold = async (id: string, status: 'completed' | 'failed', cost?: bigint) => {
        const hold = await gateway.store.reserve({ owner, amount: 5_000n, requestId: null, expiresAt: Date.now() + 60_000, holder: { kind: 'job', id } });
        // Created ended (a queued one would be claimed by the gateway's workers), as its instance left it.
        await gateway.store.createJob({
          id,
          kind: 'response',
          owner,
          keyId: 'key_x',
          status,
          payload: null,
          result: null,
          reservationId: hold!.id,
          createdAt: longAgo,
          expiresAt: Date.now() + 60_000,
        });
        await gateway.store.transitionJob(id, [status], { cost, now: longAgo });
      };
      await endedWithHold(`resp_orphan_done_${engine}`, 'completed', 1_234n);
      await endedWithHold(`resp_orphan_failed_${engine}`, 'failed');
      // The runner's own periodic pass may get to them first: either way both are finished once.
      assert.ok((await gateway.deps.jobs.runner.reconcile()) <= 2);
      const charges = await newCharges(gateway, before);
      assert.deepEqual(
        charges.map((charge) => charge.amount),
        [1_234n],
      );
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
      assert.equal(await gateway.deps.jobs.runner.reconcile(), 0, 'nothing left to finish');
    });
  });
}
