/**
 * Upstream timeouts per provider and per endpoint (src/catalog/timeouts.ts): how they resolve, and
 * over HTTP with the official client: an endpoint's time to first byte over its provider's, and a
 * total deadline in the middle of a stream, which ends it with an in-stream error billed for what
 * was delivered (an idle silence does the same: test/simulators/chat-e2e.ts, per protocol).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import OpenAI from 'openai';
import { routeTimeouts, TIMEOUT_DEFAULTS } from '../../src/catalog/timeouts.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertCharges, ledger, LONG_PROMPT, readChatStream, requestIdOf } from '../simulators/chat-e2e.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';

const endpointOf = (timeouts?: Record<string, number>) =>
  ({ provider: 'p', model: 'm', supply: 'first_party', training_use: 'never', pricing: { unit: 'per_1m_tokens' }, ...(timeouts && { timeouts }) }) as const;

describe('timeouts of a route', () => {
  test('defaults: connect 10 s, first byte and idle 10 minutes, no total', () => {
    assert.deepEqual(routeTimeouts({ id: 'p', kind: 'openai' }, endpointOf()), TIMEOUT_DEFAULTS);
    assert.deepEqual(TIMEOUT_DEFAULTS, { connectMs: 10_000, firstByteMs: 600_000, idleMs: 600_000, totalMs: undefined });
  });

  test("a provider's timeout_ms sets first byte and idle; its timeouts, then the endpoint's, take precedence field by field", () => {
    assert.deepEqual(routeTimeouts({ id: 'p', kind: 'openai', timeout_ms: 3_000 }, endpointOf()), {
      connectMs: 3_000,
      firstByteMs: 3_000,
      idleMs: 3_000,
      totalMs: undefined,
    });
    const provider = { id: 'p', kind: 'openai', timeout_ms: 3_000, timeouts: { idle_ms: 2_000, total_ms: 60_000 } } as const;
    assert.deepEqual(routeTimeouts(provider, endpointOf({ first_byte_ms: 500, total_ms: 9_000 })), {
      connectMs: 3_000,
      firstByteMs: 500,
      idleMs: 2_000,
      totalMs: 9_000,
    });
  });
});

const MODEL = 'gateway/timed';
const SINGLE = 'gateway/timed-single';

describe('timeouts over HTTP', () => {
  let primary: OpenAIChatSimulator;
  let secondary: OpenAIChatSimulator;
  let gateway: TestGateway;
  let client: OpenAI;

  before(async () => {
    primary = await startOpenAIChatSimulator({ apiKey: 'sk-primary' });
    secondary = await startOpenAIChatSimulator({ apiKey: 'sk-secondary' });
    const base = chatModelsConfig({
      [MODEL]: [
        { id: 'primary', kind: 'openai', baseUrl: primary.baseUrl, apiKeyEnv: 'PRIMARY_KEY' },
        { id: 'secondary', kind: 'openai', baseUrl: secondary.baseUrl, apiKeyEnv: 'SECONDARY_KEY' },
      ],
      [SINGLE]: [{ id: 'primary', kind: 'openai', baseUrl: primary.baseUrl, apiKeyEnv: 'PRIMARY_KEY', upstreamModel: 'primary-single' }],
    });
    const config: GatewayConfig = {
      ...base,
      // The provider is patient; its endpoint of MODEL is not, and SINGLE's stream has a total deadline.
      providers: base.providers.map((provider) =>
        provider.id === 'primary' ? { ...provider, timeouts: { first_byte_ms: 30_000, idle_ms: 30_000 } } : provider,
      ),
      models: base.models.map((model) => ({
        ...model,
        endpoints: model.endpoints.map((endpoint) =>
          endpoint.provider !== 'primary'
            ? endpoint
            : { ...endpoint, timeouts: model.id === MODEL ? { first_byte_ms: 300, total_ms: 600 } : { total_ms: 600 } },
        ),
      })),
      breakers: { enabled: false },
    };
    gateway = await startGateway({ config, env: { PRIMARY_KEY: 'sk-primary', SECONDARY_KEY: 'sk-secondary' } });
    client = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  });
  beforeEach(() => primary.setDefault({ kind: 'normal' }));
  after(async () => {
    await gateway.close();
    await primary.close();
    await secondary.close();
  });

  test("the endpoint's time to first byte, shorter than its provider's, moves a slow answer to the fallback", { timeout: 60_000 }, async () => {
    primary.enqueue({ kind: 'delay', ms: 3_000 });
    const served = secondary.requests.length;
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(completion.choices[0].message.content, 'Echo: hello');
    assert.equal(secondary.requests.length, served + 1);
  });

  test('a stream past its total deadline ends with an in-stream timeout, billed for what was delivered', { timeout: 60_000 }, async () => {
    // The provider allows 30 s of silence; the endpoint's total deadline cuts the stream first.
    primary.enqueue({ kind: 'stall', afterEvents: 6 });
    const before = await ledger(gateway);
    const { data: stream, response } = await client.chat.completions
      .create({ model: SINGLE, messages: [{ role: 'user', content: LONG_PROMPT }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const read = await readChatStream(stream);
    assert.ok(read.error instanceof OpenAI.APIError, `an in-stream error, not ${String(read.error)}`);
    assert.equal(read.error.code, 'upstream_timeout');
    assert.ok(read.text.length > 0, 'text was delivered before the deadline');
    const charged = await assertCharges(gateway, before, 1, requestIdOf(response));
    assert.ok(charged > 0n, 'billed for the delivered part');
  });
});
