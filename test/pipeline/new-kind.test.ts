/**
 * A new kind of output, defined entirely in this test with a scripted protocol, gets everything
 * from the metered-call core without touching it: selection and validation, a credit hold of its
 * own quote, provider fallback, settlement on what was delivered, the request log row with its
 * stored output, Idempotency-Key replays, a prepared call stored as data and completed later by
 * another pipeline (a job's worker), and a start-and-poll job kind of its own, queued, started,
 * parked and looked at by the job runner, then settled and recorded once. Run on both stores.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { GatewayAuthenticator } from '../../src/auth/authenticator.ts';
import { ZERO_USAGE } from '../../src/canonical/index.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { withIdempotency } from '../../src/http/idempotency.ts';
import { rejectionRecorder } from '../../src/http/request-recording.ts';
import type { RouteModule } from '../../src/http/route-module.ts';
import type { OutputKind } from '../../src/pipeline/kind.ts';
import type { ChargeGate, MeteredCall } from '../../src/pipeline/metered-call.ts';
import type { OperationDriver, StartedOperation } from '../../src/pipeline/operation.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { preparedCallRecord, resumePrepared } from '../../src/pipeline/prepared-record.ts';
import { fieldRef, type ParamNamer } from '../../src/policy/violation.ts';
import { defineCapability, implement, provides } from '../../src/protocols/capability.ts';
import { errors, type GatewayError } from '../../src/core/errors.ts';
import type { JobHandler } from '../../src/jobs/handler.ts';
import { jobGate } from '../../src/jobs/job-gate.ts';
import { recordMeteredJobEnd, resumeJobCall, submitMetered, type MeteredJobKind } from '../../src/jobs/metered-job.ts';
import type { JobRecord } from '../../src/storage/store.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { untilEnded } from '../helpers/jobs.ts';
import { endpoint, ledger, model, newCharges, ownerOf } from '../chat/helpers.ts';

// The kind: "widgets", priced per image, `count` of them per request.
interface WidgetRequest {
  readonly model: string;
  readonly fallbackModels: readonly string[];
  readonly stream: false;
  readonly count: number;
}
interface WidgetProtocol {
  complete(request: WidgetRequest, endpoint: { readonly upstreamModel: string }): Promise<{ readonly widgets: readonly string[] }>;
}
interface WidgetTypes {
  readonly request: WidgetRequest;
  readonly result: { readonly widgets: readonly string[] };
  readonly meter: { readonly widgets: number };
  readonly estimate: undefined;
  readonly protocol: WidgetProtocol;
}
const WIDGETS_CAPABILITY = defineCapability<WidgetProtocol>('widgets');
const WIDGETS: OutputKind<WidgetTypes> = {
  name: 'widgets',
  category: 'IMAGE',
  capability: WIDGETS_CAPABILITY,
  unservable: 'widgets',
  requestBytes: false,
  estimate: () => undefined,
  check: (request, route) =>
    request.count > (route.limits.max_images ?? Infinity) ? { ref: fieldRef('stream'), message: () => 'too many widgets', code: 'invalid_value' } : undefined,
  quote: (request, route) => BigInt(request.count) * (route.prices.perImage ?? 0n),
  meter: (_request, result) => ({ widgets: result.widgets.length }),
  cost: (prices, meter) => BigInt(meter.widgets) * (prices.perImage ?? 0n),
  logged: () => ({ usage: ZERO_USAGE, searchUnits: 0 }),
};

/** Fails on upstream model `fail-503`; delivers one widget fewer than asked on `short`. */
function scriptedWidgets(): WidgetProtocol & { readonly calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    async complete(request, route) {
      calls.push(route.upstreamModel);
      if (route.upstreamModel === 'fail-503') throw errors.upstreamOverloaded('busy', true, undefined);
      const delivered = route.upstreamModel === 'short' ? request.count - 1 : request.count;
      return { widgets: Array.from({ length: delivered }, (_, index) => `widget-${index}`) };
    },
  };
}

const names: ParamNamer = { name: (ref) => (ref.kind === 'field' && ref.field === 'stream' ? 'count' : 'body') };
const WidgetBody = Type.Object(
  { model: Type.String(), count: Type.Integer({ minimum: 1 }), models: Type.Optional(Type.Array(Type.String())) },
  { additionalProperties: false },
);

/** The widgets as a job kind of this test's own, unknown to the gateway's schema and code. */
const WIDGET_JOBS: MeteredJobKind<WidgetTypes> = {
  jobKind: 'test-widgets',
  output: WIDGETS,
  queued: (_prepared, jobId) => ({ id: jobId, status: 'queued' }),
};
const widgetJobEnds = {
  ended: () => 'completed' as const,
  failed: (job: JobRecord, error: GatewayError) => ({ id: job.id, status: 'failed', code: error.code }),
  cancelled: (job: JobRecord) => ({ id: job.id, status: 'cancelled' }),
};

/** A widget operation's checkpoint: the route that accepted it and the looks taken so far. */
interface WidgetCheckpoint extends StartedOperation {
  readonly looks: number;
}

/** The operation, as an upstream would run it: accepted by the plan's last route, done at the third look, one widget short. */
const widgetOperation: OperationDriver<WidgetTypes, WidgetCheckpoint, readonly string[]> = {
  start: async (call) => ({ routeKey: call.prepared.attempts.at(-1)!.key, looks: 0 }),
  look: async (_call, _endpoint, checkpoint) =>
    checkpoint.looks + 1 < 3 ? { status: 'running', retryAfterMs: 1 } : { status: 'succeeded', delivered: ['widget-0', 'widget-1'] },
  meter: (_call, _endpoint, delivered) => ({ widgets: delivered.length }),
};

/**
 * A widget operation's end once the upstream is done: metered on what it delivered, charged once
 * (false: the call's gate refused), and its row recorded.
 */
async function settleWidgets(call: MeteredCall<WidgetTypes>, endpoint: RouteEndpoint, delivered: readonly string[]): Promise<boolean> {
  const metered = call.meter(endpoint, widgetOperation.meter(call, endpoint, delivered));
  const charged = await call.charge(metered, () => delivered);
  if (charged === undefined) return false;
  await call.record({ status: 'completed', httpStatus: 200, ...call.settled(endpoint, charged.settlement), output: charged.body });
  return true;
}

/**
 * The start-and-poll handler of widget jobs: each run is one step (the start, or one look), parked
 * in between; `steps` tells what each run did.
 */
function widgetJobHandler(pipeline: () => Pipeline, steps: string[]): JobHandler {
  return {
    kind: WIDGET_JOBS.jobKind,
    schedule: 'operation',
    failed: widgetJobEnds.failed,
    cancelled: widgetJobEnds.cancelled,
    recordEnd: (job, status, error) => recordMeteredJobEnd(pipeline(), job, status, error),
    async run(job, context) {
      const core = pipeline();
      const prepared = await resumeJobCall(core, WIDGETS, job, context, names, widgetJobEnds.failed);
      if (prepared === undefined) return;
      const call = core.meteredCall(prepared, jobGate(job, context, widgetJobEnds));
      let checkpoint = job.checkpoint as WidgetCheckpoint | null;
      if (checkpoint === null) {
        if (!(await context.dispatch())) return;
        checkpoint = await widgetOperation.start(call);
        if (!(await context.checkpoint(checkpoint))) return;
        steps.push('started');
      }
      const endpoint = core.catalog.route(prepared.modelId, checkpoint.routeKey)!;
      const look = await widgetOperation.look(call, endpoint, checkpoint, context.signal);
      if (look.status === 'running') {
        const looks = checkpoint.looks + 1;
        if (await context.park(core.now() + (look.retryAfterMs ?? 0), { ...checkpoint, looks })) steps.push(`parked after look ${looks}`);
        return;
      }
      assert.equal(look.status, 'succeeded');
      if (await settleWidgets(call, endpoint, look.delivered)) steps.push('settled');
    },
  };
}

function widgetRoutes(pipeline: (deps: never) => Pipeline, jobSteps: string[]): RouteModule {
  return (app, deps) => {
    const core = pipeline(deps as never);
    deps.jobs.runner.register(widgetJobHandler(() => core, jobSteps));
    app.addHook('onClose', () => core.close());
    app.post<{ Body: Static<typeof WidgetBody> }>(
      '/v1/test/widgets',
      withIdempotency(
        deps,
        { route: 'widgets', resultHeaders: ['x-gateway-cost-usd'], pipeline: core },
        {
          schema: { body: WidgetBody },
          onRequest: deps.authenticator.require('images'),
          onError: rejectionRecorder(core, 'widgets', deps.now),
        },
      ),
      async (request, reply) => {
        const input = {
          request: { model: request.body.model, fallbackModels: request.body.models ?? [], stream: false as const, count: request.body.count },
          names,
          auth: request.auth,
          requestId: request.gatewayRequestId,
          route: 'widgets',
          signal: new AbortController().signal,
        };
        const completed = await core.complete(WIDGETS, input, (result, served) => ({ model: served.modelId, data: result.widgets }));
        return reply.header('x-gateway-cost-usd', formatUsd(completed.settlement.charged)).type('application/json').send(completed.json);
      },
    );
  };
}

const perImage = (usd: number) => ({ unit: 'per_image' as const, per_image: usd });
const widgetModel = (id: string, routes: ReturnType<typeof endpoint>[]) =>
  model(id, routes, { category: 'IMAGE', type: 'image', input_modalities: ['text'], output_modalities: ['image'] });
const config: GatewayConfig = {
  providers: [{ id: 'sim', kind: 'simulated', simulated: { chunk_delay_ms: 0 } }],
  models: [
    // Sorted by price: the cheaper, failing route first, so that fallback is exercised.
    widgetModel('gateway/widgets', [
      endpoint('fail-503', { pricing: perImage(0.1), limits: { max_images: 4 } }),
      endpoint('healthy', { pricing: perImage(0.25), limits: { max_images: 4 } }),
    ]),
    widgetModel('gateway/short-widgets', [endpoint('short', { pricing: perImage(0.5), limits: { max_images: 4 } })]),
    widgetModel('gateway/dear-widgets', [endpoint('healthy', { pricing: perImage(5), limits: { max_images: 4 } })]),
    model('gateway/text', [endpoint('healthy')]),
  ],
};

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`a new kind of output on the core (${engine})`, () => {
    const protocol = scriptedWidgets();
    const protocols = { simulated: provides(implement(WIDGETS_CAPABILITY, protocol)) };
    let gateway: TestGateway;
    let core: Pipeline;
    const jobSteps: string[] = [];
    before(async () => {
      gateway = await startGateway({
        engine,
        config,
        creditUsd: '10',
        routes: [widgetRoutes((deps) => (core = new Pipeline(deps, { protocols })), jobSteps)],
      });
    });
    after(() => gateway.close());

    const widgets = (body: unknown, headers: Record<string, string> = {}) =>
      call(gateway.baseUrl, 'POST', '/v1/test/widgets', { key: gateway.apiKey, json: body, headers });

    test('the quote is held, a retryable failure falls back, and the charge is what was delivered', async () => {
      const before = await ledger(gateway);
      protocol.calls.length = 0;
      const response = await widgets({ model: 'gateway/widgets', count: 2 });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.body, { model: 'gateway/widgets', data: ['widget-0', 'widget-1'] });
      assert.deepEqual(protocol.calls, ['fail-503', 'healthy']);
      // Two widgets at the serving route's 0.25 USD each.
      assert.equal(response.headers.get('x-gateway-cost-usd'), '0.5');
      const charges = await newCharges(gateway, before);
      assert.deepEqual(
        charges.map((entry) => entry.amount),
        [usdToPicos('0.5')],
      );
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    test('a short delivery is charged for what arrived, not what was held', async () => {
      const before = await ledger(gateway);
      const response = await widgets({ model: 'gateway/short-widgets', count: 3 });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.headers.get('x-gateway-cost-usd'), '1');
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [usdToPicos('1')],
      );
    });

    test('the request log row records the model, the route, the cost and the output', async () => {
      const response = await widgets({ model: 'gateway/widgets', count: 1 });
      const requestId = response.headers.get('x-gateway-request-id')!;
      await core.flush();
      const row = await gateway.store.getRequest(requestId);
      assert.equal(row?.route, 'widgets');
      assert.equal(row?.model, 'gateway/widgets');
      assert.equal(row?.upstreamModel, 'healthy');
      assert.equal(row?.status, 'completed');
      assert.equal(row?.cost, usdToPicos('0.25'));
      assert.deepEqual(row?.output, { model: 'gateway/widgets', data: ['widget-0'] });
    });

    test("the kind's own validation runs before any credit moves, named by the caller", async () => {
      const before = await ledger(gateway);
      assertError(await widgets({ model: 'gateway/widgets', count: 5 }), { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'count' });
      assert.deepEqual(await newCharges(gateway, before), []);
    });

    test('a model of another category is not found for this kind; the `models` fallback walks on', async () => {
      assertError(await widgets({ model: 'gateway/text', count: 1 }), { status: 404, type: 'invalid_request_error', code: 'model_not_found' });
      const response = await widgets({ model: 'gateway/text', models: ['gateway/widgets'], count: 1 });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.model, 'gateway/widgets');
    });

    test('a quote above the balance is refused with 402 and nothing held', async () => {
      const { balance } = await ledger(gateway);
      const count = 4;
      assert.ok(balance.available < usdToPicos('5') * BigInt(count), 'the test account cannot cover four dear widgets');
      assertError(await widgets({ model: 'gateway/dear-widgets', count }), { status: 402, type: 'insufficient_quota_error', code: 'insufficient_quota' });
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    test('an Idempotency-Key replays the result and its cost header, charging once', async () => {
      const before = await ledger(gateway);
      const headers = { 'idempotency-key': `widgets-${engine}` };
      const first = await widgets({ model: 'gateway/widgets', count: 1 }, headers);
      const second = await widgets({ model: 'gateway/widgets', count: 1 }, headers);
      assert.equal(second.status, 200);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(second.text, first.text);
      assert.equal(second.headers.get('x-gateway-cost-usd'), '0.25');
      assert.equal((await newCharges(gateway, before)).length, 1);
    });

    /** The input of a widget call, as a route builds it, without HTTP. */
    async function widgetInput(count: number, modelId: string) {
      const auth = await (gateway.deps.authenticator as GatewayAuthenticator).authenticate({
        headers: { authorization: `Bearer ${gateway.apiKey}` },
      } as FastifyRequest);
      return {
        request: { model: modelId, fallbackModels: [], stream: false as const, count },
        names,
        auth,
        requestId: timeOrderedId('req'),
        route: 'widgets',
        signal: new AbortController().signal,
      };
    }

    /** A widget call prepared in the core, as a job's submission does. */
    async function prepareWidgets(count: number, modelId = 'gateway/widgets') {
      return core.prepare(WIDGETS, await widgetInput(count, modelId));
    }

    test("a start-and-poll job kind of the test's own: queued, started, parked and looked at by the runner, settled and recorded once", async () => {
      const before = await ledger(gateway);
      jobSteps.length = 0;
      const input = await widgetInput(3, 'gateway/short-widgets');
      const jobId = timeOrderedId('job');
      // The runner's word that the job's last run is over (a parked step does not count).
      const finished = new Promise<void>((resolve) => gateway.deps.jobs.runner.onJobFinished((job) => job.id === jobId && resolve()));
      const queued = await submitMetered(core, gateway.deps.jobs, WIDGET_JOBS, { ...input, jobId, context: null });
      assert.equal(queued.kind, 'test-widgets');
      assert.equal(queued.status, 'queued');
      // Three widgets held at 0.5 USD each.
      assert.equal((await ledger(gateway)).balance.reserved, usdToPicos('1.5'));
      const ended = await untilEnded(async () => (await gateway.store.getJob(queued.id))!, ['queued', 'in_progress'], 'the widget job');
      await finished;
      assert.equal(ended.status, 'completed');
      assert.deepEqual(ended.result, ['widget-0', 'widget-1']);
      assert.deepEqual(jobSteps, ['started', 'parked after look 1', 'parked after look 2', 'settled']);
      // Parked steps are claimed again without counting as a new attempt.
      assert.equal(ended.attempts, 1);
      assert.deepEqual(ended.checkpoint, { routeKey: 'sim:short', looks: 2 });
      // The two widgets delivered, charged once; nothing left held.
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [usdToPicos('1')],
      );
      assert.equal(ended.cost, usdToPicos('1'));
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
      await core.flush();
      const row = await gateway.store.getRequest(input.requestId);
      assert.equal(row?.status, 'completed');
      assert.equal(row?.cost, usdToPicos('1'));
      assert.equal(row?.upstreamModel, 'short');
    });

    test('a job of a kind no handler is registered for is refused before it is stored', async () => {
      const id = timeOrderedId('job');
      await assert.rejects(
        gateway.deps.jobs.submit({
          id,
          kind: 'unregistered',
          owner: ownerOf(gateway),
          keyId: 'key_none',
          status: 'queued',
          payload: null,
          result: null,
          reservationId: null,
          createdAt: gateway.deps.now(),
          expiresAt: gateway.deps.now() + 60_000,
        }),
        /no handler for unregistered jobs/,
      );
      assert.equal(await gateway.store.getJob(id), null);
    });

    test('a prepared call stored as data is completed later by another pipeline, once', async () => {
      const before = await ledger(gateway);
      const prepared = await prepareWidgets(2);
      // The hold is the worst case over the plan: two widgets at the dearer route's price.
      assert.equal((await ledger(gateway)).balance.reserved, usdToPicos('0.5'));
      const stored = JSON.parse(JSON.stringify(preparedCallRecord(prepared)));

      const worker = new Pipeline(gateway.deps, { protocols });
      try {
        const resumed = await resumePrepared(worker, WIDGETS, stored, { names, signal: new AbortController().signal });
        const completed = await worker.meteredCall(resumed).complete((result) => result.widgets);
        assert.deepEqual(completed.body, ['widget-0', 'widget-1']);
        assert.equal(completed.settlement.charged, usdToPicos('0.5'));
        assert.equal((await ledger(gateway)).balance.reserved, 0n);
        // A second worker that picks up the same record finds the hold settled and runs nothing.
        await assert.rejects(resumePrepared(worker, WIDGETS, stored, { names, signal: new AbortController().signal }), { status: 409, code: 'invalid_state' });
        assert.equal((await newCharges(gateway, before)).length, 1);
      } finally {
        await worker.close();
      }
    });

    test('a start-and-poll operation of this kind: started, looked at until done, then admitted, charged and recorded once, in that order', async () => {
      const before = await ledger(gateway);
      const prepared = await prepareWidgets(3);
      const steps: string[] = [];
      const gate: ChargeGate<readonly string[]> = {
        admit: async (_body, cost) => {
          // The end is admitted before anything is charged.
          steps.push(`admit ${cost} with ${(await newCharges(gateway, before)).length} charges`);
          return true;
        },
        amend: async () => {
          steps.push('amend');
        },
      };
      const call = core.meteredCall(prepared, gate);
      let checkpoint = await widgetOperation.start(call);
      const endpoint = gateway.deps.catalog.route(prepared.modelId, checkpoint.routeKey)!;
      let look = await widgetOperation.look(call, endpoint, checkpoint, prepared.signal);
      while (look.status === 'running') {
        checkpoint = { ...checkpoint, looks: checkpoint.looks + 1 };
        look = await widgetOperation.look(call, endpoint, checkpoint, prepared.signal);
      }
      assert.equal(look.status, 'succeeded');
      assert.equal(checkpoint.looks, 2);
      assert.ok(await settleWidgets(call, endpoint, look.delivered));
      await call.record({ status: 'failed', httpStatus: 500 });
      assert.deepEqual(steps, [`admit ${usdToPicos('0.5')} with 0 charges`]);
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [usdToPicos('0.5')],
      );
      await core.flush();
      const row = await gateway.store.getRequest(prepared.requestId);
      assert.equal(row?.status, 'completed', 'the first record is the row; a second changes nothing');
      assert.equal(row?.cost, usdToPicos('0.5'));
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
    });

    test('a failure after the charge (the answer could not be rendered): the charge stands and the row says so', async () => {
      const before = await ledger(gateway);
      const prepared = await prepareWidgets(2);
      await assert.rejects(
        core.meteredCall(prepared).complete(() => {
          throw new Error('the answer could not be rendered');
        }),
        { status: 500 },
      );
      assert.deepEqual(
        (await newCharges(gateway, before)).map((entry) => entry.amount),
        [usdToPicos('0.5')],
      );
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
      await core.flush();
      const row = await gateway.store.getRequest(prepared.requestId);
      assert.deepEqual([row?.status, row?.httpStatus, row?.cost], ['failed', 500, usdToPicos('0.5')]);
    });

    test('a gate that refuses (the work moved on): nothing charged, nothing released, no row', async () => {
      const before = await ledger(gateway);
      const prepared = await prepareWidgets(1);
      const call = core.meteredCall(prepared, { admit: async () => false, amend: async () => {} });
      await assert.rejects(
        call.complete((result) => result.widgets),
        { status: 409, code: 'invalid_state' },
      );
      assert.deepEqual(await newCharges(gateway, before), []);
      // The hold is whoever won's to finish.
      assert.equal((await ledger(gateway)).balance.reserved, prepared.hold.reservation.amount);
      await core.flush();
      assert.equal(await gateway.store.getRequest(prepared.requestId), null);
      await prepared.hold.release();
    });

    test('a failure with a gate: its end is admitted while the hold is still open, then released, then recorded', async () => {
      const prepared = await prepareWidgets(1);
      const ends: string[] = [];
      const call = core.meteredCall(prepared, {
        admit: async () => true,
        amend: async () => {},
        refuse: async (end) => {
          ends.push(`${end.status} ${end.error.code} with ${(await ledger(gateway)).balance.reserved} held`);
          return true;
        },
      });
      const failure = await call.fail(errors.upstreamOverloaded('busy', true, undefined));
      assert.equal(failure.status, 503);
      assert.deepEqual(ends, [`failed upstream_unavailable with ${prepared.hold.reservation.amount} held`]);
      assert.equal((await ledger(gateway)).balance.reserved, 0n);
      await core.flush();
      assert.equal((await gateway.store.getRequest(prepared.requestId))?.status, 'failed');
    });
  });
}
