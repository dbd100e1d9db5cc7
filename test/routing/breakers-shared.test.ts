/**
 * Two gateway instances with one Redis see one breaker per endpoint: failures seen by one open it
 * for both, the other then skips the endpoint without ever failing on it, and a probe by either
 * closes it for both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { eventually } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { deleteRedisKeys, TEST_REDIS_URL, testRedisPrefix } from '../helpers/redis.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';

const ADMIN_KEY = 'admin-key-for-shared-breakers';
const MODEL = 'gateway/shared-breaker';
const MIN_REQUESTS = 4;
/** Redis keeps the time: long enough for the checks made while it is open, even on a busy machine. */
const COOLDOWN_MS = 3_000;

describe('breakers shared by two instances through Redis', () => {
  const prefix = testRedisPrefix();
  let primary: OpenAIChatSimulator;
  let secondary: OpenAIChatSimulator;
  let instances: TestGateway[] = [];

  before(async () => {
    primary = await startOpenAIChatSimulator({ apiKey: 'sk-primary' });
    secondary = await startOpenAIChatSimulator({ apiKey: 'sk-secondary' });
    const config = {
      ...chatModelsConfig({
        [MODEL]: [
          { id: 'primary', kind: 'openai', baseUrl: primary.baseUrl, apiKeyEnv: 'PRIMARY_KEY' },
          { id: 'secondary', kind: 'openai', baseUrl: secondary.baseUrl, apiKeyEnv: 'SECONDARY_KEY' },
        ],
      }),
      breakers: { min_requests: MIN_REQUESTS, failure_rate_percent: 50, cooldown_ms: COOLDOWN_MS },
    };
    const options = { config, env: { PRIMARY_KEY: 'sk-primary', SECONDARY_KEY: 'sk-secondary' }, adminKey: ADMIN_KEY, redis: { url: TEST_REDIS_URL, prefix } };
    instances = [await startGateway(options), await startGateway(options)];
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await primary.goOnline();
    await primary.close();
    await secondary.close();
    await deleteRedisKeys(prefix);
  });

  const ask = (instance: TestGateway) =>
    new OpenAI({ apiKey: instance.apiKey, baseURL: `${instance.baseUrl}/v1`, maxRetries: 0 }).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hello' }],
    });

  async function primaryOf(instance: TestGateway) {
    const listed = await call(instance.baseUrl, 'GET', '/admin/v1/endpoints', { key: ADMIN_KEY });
    assert.equal(listed.status, 200, listed.text);
    return listed.body.data.find((endpoint: { provider: string }) => endpoint.provider === 'primary');
  }

  test("one instance's failures open the breaker for both; a probe through the other closes it for both", async () => {
    const [first, second] = instances;
    await primary.goOffline();
    for (let index = 0; index < MIN_REQUESTS; index++) await ask(first);
    assert.equal((await primaryOf(first)).state, 'open');

    // The second instance reads the shared state: it skips the primary and never fails on it.
    const seen = await primaryOf(second);
    assert.equal(seen.state, 'open');
    assert.ok(seen.retry_in_ms > 0);
    for (let index = 0; index < 3; index++) await ask(second);
    assert.equal((await primaryOf(second)).attempts.failed, 0, 'the second instance made no attempt at the open endpoint');

    await primary.goOnline();
    await eventually(async () => assert.equal((await primaryOf(second)).retry_in_ms, 0));
    const before = primary.requests.length;
    await ask(second);
    assert.equal(primary.requests.length, before + 1, "the second instance's probe");
    assert.equal((await primaryOf(second)).state, 'closed');
    assert.equal((await primaryOf(first)).state, 'closed', 'closed for the first instance too');
  });
});
