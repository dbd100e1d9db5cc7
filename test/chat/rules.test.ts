/**
 * The numbered rules of POST /v1/chat/completions, each against routes whose capabilities, limits
 * and constraints make it bite. Every rejection is a 400 `unsupported_parameter` naming the
 * client's field, and happens before any credit is reserved.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { CapabilitiesConfig } from '../../src/config/schema.ts';
import { registerChatRoutes } from '../../src/dialects/chat/route.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { implement, provides } from '../../src/protocols/capability.ts';
import { CHAT } from '../../src/protocols/protocol.ts';
import type { CanonicalParam } from '../../src/canonical/index.ts';
import { simulatedProtocol } from '../../src/protocols/simulated/protocol.ts';
import type { AppDeps } from '../../src/http/deps.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { endpoint, FULL_CAPABILITIES, ledger, model, simulatedConfig } from './helpers.ts';

const RESPONSES_STYLE: readonly CanonicalParam[] = ['stop', 'seed', 'presencePenalty', 'frequencyPenalty', 'logprobs', 'topLogprobs'];

const limited = (capabilities: CapabilitiesConfig) => ({ ...FULL_CAPABILITIES, ...capabilities });

const config = simulatedConfig(
  [
    model('gateway/full', [endpoint('sim-full')]),
    model('gateway/no-search', [endpoint('sim-no-search', { capabilities: limited({ web_search: false }) })]),
    model('gateway/unverified-search', [endpoint('sim-unverified', { capabilities: { tool_use: true } })]),
    model('gateway/responses-route', [endpoint('resp-model', { provider: 'resp' })]),
    model('gateway/no-sampling', [endpoint('sim-no-sampling', { capabilities: limited({ sampling: false }) })]),
    model('gateway/no-parallel', [endpoint('sim-no-parallel', { capabilities: limited({ parallel_tool_calls: false }) })]),
    model('gateway/old-generation', [endpoint('sim-old', { capabilities: limited({ json_mode_with_tools: false, web_search_with_tools: false }) })]),
    model('gateway/no-structured', [endpoint('sim-no-structured', { capabilities: limited({ structured_outputs: false, strict_tools: false }) })]),
    model('gateway/low-high', [endpoint('sim-low-high', { limits: { max_tokens: 1000, reasoning_efforts: ['low', 'high'] } })]),
    model('gateway/no-reasoning', [endpoint('sim-no-reasoning', { capabilities: limited({ reasoning: false }) })]),
    model('gateway/text-only', [endpoint('sim-text-only', { capabilities: limited({ vision: false, tool_use: false, json_mode: false, streaming: false }) })]),
    model('gateway/small', [endpoint('sim-small', { limits: { max_tokens: 100, context_window: 50 } })]),
    model('gateway/constrained', [
      endpoint('sim-constrained', {
        parameters: {
          chat: {
            temperature: { supported: true, type: 'number', minimum: 0, maximum: 1 },
            top_p: { supported: false },
            'response_format.type': { allowed_values: ['text', 'json_object'] },
            stop: { allowed_values: ['END'] },
            'extra_body.cloud_a.top_k': { supported: true, type: 'integer', minimum: 1, maximum: 40 },
          },
        },
      }),
    ]),
  ],
  {
    providers: [
      { id: 'sim', kind: 'simulated', simulated: { chunk_delay_ms: 0 } },
      { id: 'resp', kind: 'openai-responses', base_url: 'http://127.0.0.1:9' },
    ],
  },
);

/** The chat routes over the simulated protocol, with a responses-style route that cannot express rule 3's fields. */
function chatRoutesWithResponsesStyle(app: FastifyInstance, deps: AppDeps): void {
  registerChatRoutes(
    app,
    deps,
    new Pipeline(deps, {
      protocols: {
        simulated: provides(implement(CHAT, simulatedProtocol)),
        'openai-responses': provides(implement(CHAT, { ...simulatedProtocol, unsupportedParameters: RESPONSES_STYLE })),
      },
    }),
  );
}

const user = [{ role: 'user', content: 'hello' }];
const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } };

describe('chat completions rules', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ config, routes: [chatRoutesWithResponsesStyle] });
  });
  after(() => gateway.close());

  const post = (body: Record<string, unknown>) =>
    call(gateway.baseUrl, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { messages: user, ...body } });
  const rejects = async (body: Record<string, unknown>, param: string) =>
    assertError(await post(body), { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param });
  const accepts = async (body: Record<string, unknown>) => {
    const response = await post(body);
    assert.equal(response.status, 200, response.text);
    return response.body;
  };

  test('rule 2: web search only where capabilities.web_search is true', async () => {
    await rejects({ model: 'gateway/no-search', tools: [tool, { type: 'web_search' }] }, 'tools[1]');
    await rejects({ model: 'gateway/unverified-search', tools: [{ type: 'web_search' }] }, 'tools[0]');
    const body = await accepts({ model: 'gateway/full', tools: [{ type: 'web_search' }] });
    assert.equal(body.x_gateway.web_search.billed_queries, 1);
  });

  test('rule 3: a responses-style route rejects explicit stop, seed, penalties, logprobs (even false) and top_logprobs', async () => {
    const model = 'gateway/responses-route';
    await rejects({ model, stop: 'x' }, 'stop');
    await rejects({ model, stop: [] }, 'stop');
    await rejects({ model, seed: 1 }, 'seed');
    await rejects({ model, presence_penalty: 0 }, 'presence_penalty');
    await rejects({ model, frequency_penalty: 0 }, 'frequency_penalty');
    await rejects({ model, logprobs: false }, 'logprobs');
    await rejects({ model, logprobs: true, top_logprobs: 0 }, 'logprobs');
    await accepts({ model, temperature: 0.5 });
  });

  test('rule 4: temperature and top_p are rejected where sampling is false, accepted elsewhere', async () => {
    await rejects({ model: 'gateway/no-sampling', temperature: 1 }, 'temperature');
    await rejects({ model: 'gateway/no-sampling', top_p: 0.5 }, 'top_p');
    await accepts({ model: 'gateway/no-sampling' });
    await accepts({ model: 'gateway/full', temperature: 1, top_p: 0.5 });
  });

  test('rule 5: parallel_tool_calls false is rejected where unsupported; true and omission are fine', async () => {
    await rejects({ model: 'gateway/no-parallel', tools: [tool], parallel_tool_calls: false }, 'parallel_tool_calls');
    await accepts({ model: 'gateway/no-parallel', tools: [tool], parallel_tool_calls: true });
    await accepts({ model: 'gateway/no-parallel', tools: [tool] });
    await accepts({ model: 'gateway/full', tools: [tool], parallel_tool_calls: false });
  });

  test('rule 6: JSON output with tools, and web search with function tools, rejected by the older generation', async () => {
    const model = 'gateway/old-generation';
    await rejects({ model, tools: [tool], response_format: { type: 'json_object' } }, 'response_format');
    await rejects({ model, tools: [tool, { type: 'web_search' }] }, 'tools[1]');
    await accepts({ model, response_format: { type: 'json_object' } });
    await accepts({ model, tools: [{ type: 'web_search' }] });
    await accepts({ model: 'gateway/full', tools: [tool, { type: 'web_search' }], response_format: { type: 'json_object' } });
  });

  test('rule 7: strict JSON schema and strict tools need structured outputs', async () => {
    const model = 'gateway/no-structured';
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] };
    await rejects({ model, response_format: { type: 'json_schema', json_schema: { name: 's', schema, strict: true } } }, 'response_format.json_schema.strict');
    await rejects({ model, tools: [{ type: 'web_search' }, { ...tool, function: { ...tool.function, strict: true } }] }, 'tools[1].function.strict');
    await accepts({ model, response_format: { type: 'json_schema', json_schema: { name: 's', schema } } });
    await accepts({ model, tools: [tool] });
  });

  test('rule 8: reasoning_effort must be listed; none is a value like any other', async () => {
    await rejects({ model: 'gateway/low-high', reasoning_effort: 'medium' }, 'reasoning_effort');
    await rejects({ model: 'gateway/low-high', reasoning_effort: 'none' }, 'reasoning_effort');
    await accepts({ model: 'gateway/low-high', reasoning_effort: 'low' });
    await rejects({ model: 'gateway/no-reasoning', reasoning_effort: 'low' }, 'reasoning_effort');
    await accepts({ model: 'gateway/full', reasoning_effort: 'none' });
  });

  test('capabilities: images, tools, JSON mode and streaming where the route says false', async () => {
    const model = 'gateway/text-only';
    const image = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    await rejects(
      {
        model,
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: [{ type: 'text', text: 'look' }, image] },
        ],
      },
      'messages[1].content[1]',
    );
    await rejects({ model, tools: [tool] }, 'tools');
    await rejects({ model, response_format: { type: 'json_object' } }, 'response_format');
    await rejects({ model, stream: true }, 'stream');
    await accepts({ model: 'gateway/full', messages: [{ role: 'user', content: [image] }] });
  });

  test('limits: max_tokens above the route limit (named as sent), a prompt over the context window', async () => {
    await rejects({ model: 'gateway/small', max_tokens: 101 }, 'max_tokens');
    await rejects({ model: 'gateway/small', max_completion_tokens: 101 }, 'max_completion_tokens');
    await accepts({ model: 'gateway/small', max_completion_tokens: 100 });
    const long = await post({ model: 'gateway/small', messages: [{ role: 'user', content: 'word '.repeat(100) }] });
    assertError(long, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'messages' });
  });

  test('parameter constraints of the route: supported, allowed values, bounds, extra_body options', async () => {
    const model = 'gateway/constrained';
    await rejects({ model, temperature: 1.5 }, 'temperature');
    await rejects({ model, top_p: 0.5 }, 'top_p');
    await rejects({ model, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }, 'response_format');
    await rejects({ model, stop: ['END', 'STOP'] }, 'stop');
    await rejects({ model, extra_body: { cloud_a: { top_k: 41 } } }, 'extra_body.cloud_a.top_k');
    await rejects({ model, extra_body: { cloud_a: { top_k: 2.5 } } }, 'extra_body.cloud_a.top_k');
    await rejects({ model, extra_body: { cloud_a: { seed: 1 } } }, 'extra_body.cloud_a.seed');
    await rejects({ model: 'gateway/full', extra_body: { cloud_a: { top_k: 5 } } }, 'extra_body.cloud_a.top_k');
    await accepts({ model, temperature: 1, stop: 'END', response_format: { type: 'json_object' }, extra_body: { cloud_a: { top_k: 40 } } });
  });

  test('rule 9: every rejection happened before credit moved', async () => {
    const snapshot = await ledger(gateway);
    assert.equal(snapshot.balance.reserved, 0n);
    const charges = snapshot.entries.filter((entry) => entry.kind === 'charge');
    // Only the accepted calls above were charged.
    assert.ok(charges.every((entry) => entry.amount > 0n));
    const before = snapshot.balance.balance;
    await rejects({ model: 'gateway/no-sampling', temperature: 1 }, 'temperature');
    const after = await ledger(gateway);
    assert.equal(after.balance.balance, before);
    assert.equal(after.entries.length, snapshot.entries.length);
  });
});
