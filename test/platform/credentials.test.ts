/**
 * Provider credentials are the environment as it was when the server started (docs/operations.md:
 * rotating a key takes a restart): the server keeps a copy, and a change made afterwards to the
 * environment it was given reaches no upstream call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { closeUpstreamPools } from '../../src/protocols/transport/pools.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';

describe('provider credentials', () => {
  let sim: OpenAIChatSimulator;
  let gateway: TestGateway;
  const env: Record<string, string> = { UPSTREAM_KEY: 'sk-at-start' };
  before(async () => {
    sim = await startOpenAIChatSimulator({ apiKey: 'sk-at-start' });
    gateway = await startGateway({
      config: chatModelsConfig({ 'gateway/credentials': [{ id: 'upstream', kind: 'openai', baseUrl: sim.baseUrl, apiKeyEnv: 'UPSTREAM_KEY' }] }),
      env,
    });
  });
  after(async () => {
    await gateway.close();
    await sim.close();
    await closeUpstreamPools();
  });

  test('are read from the environment as it was at start', async () => {
    env.UPSTREAM_KEY = 'sk-changed-later';
    const response = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      json: { model: 'gateway/credentials', messages: [{ role: 'user', content: 'hello' }] },
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(sim.requests.at(-1)?.headers.authorization, 'Bearer sk-at-start');
  });
});
