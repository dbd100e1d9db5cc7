/**
 * Health-aware routing end to end, per upstream protocol: a primary endpoint that is down, slow,
 * flapping or timing out mid-stream opens its breaker within the configured window; traffic then
 * goes to the secondary without the client seeing an error; after the cool-down a probe finds the
 * primary healthy again and closes the breaker. The official `openai` client against the real
 * gateway; the breaker is read where an operator reads it, GET /admin/v1/endpoints.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { GatewayConfig, ProviderConfig } from '../../src/config/schema.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startAnthropicSimulator } from '../simulators/anthropic.ts';
import { LONG_PROMPT, readChatStream, type ProtocolSimulator } from '../simulators/chat-e2e.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startGeminiSimulator } from '../simulators/gemini.ts';
import { startOpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { startOpenAIResponsesSimulator } from '../simulators/openai-responses.ts';

const ADMIN_KEY = 'admin-key-for-breaker-tests';
const MODEL = 'gateway/breaker-model';
/** Never over by itself during a test: the test moves the gateway's clock past it. */
const COOLDOWN_MS = 600_000;
/** Four attempts in the window, half of them failed: open. */
const MIN_REQUESTS = 4;
const BREAKERS: NonNullable<GatewayConfig['breakers']> = { window_ms: 60_000, min_requests: MIN_REQUESTS, failure_rate_percent: 50, cooldown_ms: COOLDOWN_MS };
/** The primary's timeout: what a slow or stalled answer costs before it counts as failed. */
const PRIMARY_TIMEOUT_MS = 400;

const PROTOCOLS: readonly { readonly kind: ProviderConfig['kind']; readonly start: (apiKey: string) => Promise<ProtocolSimulator> }[] = [
  { kind: 'openai', start: (apiKey) => startOpenAIChatSimulator({ apiKey }) },
  { kind: 'openai-responses', start: (apiKey) => startOpenAIResponsesSimulator({ apiKey }) },
  { kind: 'anthropic', start: (apiKey) => startAnthropicSimulator({ apiKey }) },
  { kind: 'gemini', start: (apiKey) => startGeminiSimulator({ apiKey }) },
];

export interface EndpointView {
  readonly state: string;
  readonly retry_in_ms: number | null;
  readonly failure_rate: number;
  readonly attempts: { readonly succeeded: number; readonly failed: number };
  readonly last_error: { readonly code: string } | null;
}

/** The primary endpoint as GET /admin/v1/endpoints shows it. */
export async function primaryEndpoint(gateway: TestGateway): Promise<EndpointView> {
  const listed = await call(gateway.baseUrl, 'GET', '/admin/v1/endpoints', { key: ADMIN_KEY });
  assert.equal(listed.status, 200, listed.text);
  return listed.body.data.find((endpoint: { provider: string }) => endpoint.provider === 'primary');
}

for (const protocol of PROTOCOLS) {
  describe(`circuit breakers over ${protocol.kind}`, () => {
    let primary: ProtocolSimulator;
    let secondary: ProtocolSimulator;
    let gateway: TestGateway;
    let client: OpenAI;
    /** Added to the gateway's clock: the cool-down passes when the test says so. */
    let clockOffset = 0;

    before(async () => {
      primary = await protocol.start('sk-primary');
      secondary = await protocol.start('sk-secondary');
    });
    after(async () => {
      await primary.close();
      await secondary.close();
    });
    // A gateway per test: each starts with every breaker closed.
    beforeEach(async () => {
      await gateway?.close();
      primary.setDefault({ kind: 'normal' });
      const provider = (id: string, sim: ProtocolSimulator) => ({ id, kind: protocol.kind, baseUrl: sim.baseUrl, apiKeyEnv: `${id.toUpperCase()}_KEY` });
      gateway = await startGateway({
        config: {
          ...chatModelsConfig({ [MODEL]: [{ ...provider('primary', primary), timeoutMs: PRIMARY_TIMEOUT_MS }, provider('secondary', secondary)] }),
          breakers: BREAKERS,
        },
        env: { PRIMARY_KEY: 'sk-primary', SECONDARY_KEY: 'sk-secondary' },
        adminKey: ADMIN_KEY,
        now: () => Date.now() + clockOffset,
      });
      client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
    });
    after(() => gateway?.close());

    const ask = () => client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] });

    /** Sends plain requests until the primary's breaker is open; every one is answered (by the secondary). */
    async function openByFailures(): Promise<void> {
      for (let sent = 1; ; sent++) {
        const completion = await ask();
        assert.ok(completion.choices[0].message.content, 'the client never sees the failure');
        if ((await primaryEndpoint(gateway)).state === 'open') return;
        assert.ok(sent < 2 * MIN_REQUESTS, 'opens within the window');
      }
    }

    /** The breaker skips the primary while the fault lasts; once `heal`ed, a probe after the cool-down closes it. */
    async function skipsThenRecovers(heal: () => Promise<void> | void = () => primary.setDefault({ kind: 'normal' })): Promise<void> {
      const seen = primary.requests.length;
      const failed = (await primaryEndpoint(gateway)).attempts.failed;
      for (let index = 0; index < 3; index++) await ask();
      assert.equal((await primaryEndpoint(gateway)).attempts.failed, failed, 'no attempt at the open endpoint');
      assert.equal(primary.requests.length, seen, 'nothing reached the primary');
      await heal();
      clockOffset += COOLDOWN_MS;
      assert.equal((await primaryEndpoint(gateway)).retry_in_ms, 0);
      await ask();
      assert.equal(primary.requests.length, seen + 1, 'one probe');
      const closed = await primaryEndpoint(gateway);
      assert.equal(closed.state, 'closed');
      assert.equal(closed.failure_rate, 0);
    }

    test('down: opens after the minimum of failed connections, skips the endpoint, closes on a successful probe', async () => {
      await primary.goOffline();
      try {
        await openByFailures();
        const open = await primaryEndpoint(gateway);
        assert.equal(open.last_error?.code, 'upstream_unavailable');
        assert.equal(open.attempts.failed, MIN_REQUESTS);
        await skipsThenRecovers(() => primary.goOnline());
      } finally {
        await primary.goOnline();
      }
    });

    test('slow: answers past the timeout count as failures', async () => {
      primary.setDefault({ kind: 'delay', ms: PRIMARY_TIMEOUT_MS * 3 });
      await openByFailures();
      assert.equal((await primaryEndpoint(gateway)).last_error?.code, 'upstream_timeout');
      await skipsThenRecovers();
    });

    test('flapping: every other answer a 503 reaches the failure rate', async () => {
      primary.enqueue({ kind: 'normal' }, { kind: 'status', status: 503 }, { kind: 'normal' }, { kind: 'status', status: 503 }, { kind: 'normal' });
      primary.setDefault({ kind: 'status', status: 503 });
      await openByFailures();
      const open = await primaryEndpoint(gateway);
      assert.ok(open.attempts.succeeded >= 2, 'successes were counted too');
      await skipsThenRecovers();
    });

    test('timing out mid-stream: the first streams end in an in-stream error, then streams go to the healthy endpoint', async () => {
      primary.setDefault({ kind: 'stall', afterEvents: 6 });
      const stream = () => client.chat.completions.create({ model: MODEL, stream: true, messages: [{ role: 'user', content: LONG_PROMPT }] });
      for (let index = 0; index < MIN_REQUESTS; index++) {
        const read = await readChatStream(await stream());
        assert.ok(read.error, 'a stalled stream ends with an error the client sees');
      }
      const open = await primaryEndpoint(gateway);
      assert.equal(open.state, 'open');
      assert.equal(open.last_error?.code, 'upstream_timeout');
      const healthy = await readChatStream(await stream());
      assert.equal(healthy.error, undefined);
      assert.equal(healthy.finish, 'stop');
      await skipsThenRecovers();
    });

    test("a client's bad request never counts against the endpoint", async () => {
      primary.setDefault({ kind: 'status', status: 400, message: 'bad request' });
      for (let index = 0; index < MIN_REQUESTS + 1; index++) await assert.rejects(ask(), { status: 400 });
      const endpoint = await primaryEndpoint(gateway);
      assert.equal(endpoint.state, 'closed');
      assert.equal(endpoint.attempts.failed, 0);
    });
  });
}
