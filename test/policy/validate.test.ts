/**
 * Route validation in canonical terms: capabilities (true / false / unverified), reasoning, limits,
 * per-route parameter constraints and the protocol's unsupported parameters. The chat dialect's
 * names are used to read the results; the rules themselves know no dialect.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../src/canonical/index.ts';
import type { CapabilitiesConfig, EndpointConfig } from '../../src/config/schema.ts';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';
import type { ChatCompletionBody } from '../../src/dialects/chat/schema.ts';
import { constraintViolation } from '../../src/policy/constraints.ts';
import { checkRoute } from '../../src/policy/validate.ts';
import type { CanonicalParam } from '../../src/canonical/index.ts';
import { endpoint, routeOf } from '../chat/helpers.ts';
import { estimatePromptTokens, PromptSize } from '../../src/tokens/estimate.ts';

/** The chat name of the rejected parameter, or null when the route accepts the request. */
function rejected(
  body: Partial<ChatCompletionBody>,
  overrides: Partial<EndpointConfig> = {},
  unsupportedParameters: readonly CanonicalParam[] = [],
  request?: CanonicalRequest,
): string | null {
  const decoded = decodeChatRequest({ model: 'gateway/unit', messages: [{ role: 'user', content: 'hello' }], ...body });
  const checked = request ?? decoded.request;
  const violation = checkRoute({
    request: checked,
    endpoint: routeOf(endpoint('m', overrides)),
    unsupportedParameters,
    prompt: new PromptSize(checked),
  });
  return violation ? decoded.names.name(violation.ref) : null;
}

const caps = (capabilities: CapabilitiesConfig): Partial<EndpointConfig> => ({ capabilities });
const tool = { type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } };

describe('capabilities', () => {
  test('false rejects, true and unverified allow (tools, vision, sampling, parallel calls, streaming)', () => {
    assert.equal(rejected({ tools: [tool] }, caps({ tool_use: false })), 'tools');
    assert.equal(rejected({ tools: [tool] }, caps({})), null);
    const image = { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } };
    assert.equal(
      rejected(
        {
          messages: [
            { role: 'developer', content: 'x' },
            { role: 'user', content: [image] },
          ],
        },
        caps({ vision: false }),
      ),
      'messages[1].content[0]',
    );
    assert.equal(rejected({ messages: [{ role: 'user', content: [image] }] }, caps({})), null);
    assert.equal(rejected({ top_p: 0.1 }, caps({ sampling: false })), 'top_p');
    assert.equal(rejected({ temperature: 0 }, caps({ sampling: false })), 'temperature');
    assert.equal(rejected({ parallel_tool_calls: false, tools: [tool] }, caps({ parallel_tool_calls: false })), 'parallel_tool_calls');
    assert.equal(rejected({ parallel_tool_calls: true, tools: [tool] }, caps({ parallel_tool_calls: false })), null);
    assert.equal(rejected({ stream: true }, caps({ streaming: false })), 'stream');
  });

  test('web search and strict JSON schema need an explicit true', () => {
    assert.equal(rejected({ tools: [{ type: 'web_search' }] }, caps({})), 'tools[0]');
    assert.equal(rejected({ tools: [{ type: 'web_search' }] }, caps({ web_search: true })), null);
    const strict = { type: 'json_schema' as const, json_schema: { name: 's', schema: {}, strict: true } };
    assert.equal(rejected({ response_format: strict }, caps({ json_mode: true })), 'response_format.json_schema.strict');
    assert.equal(rejected({ response_format: strict }, caps({ structured_outputs: true })), null);
  });

  test('strict tools follow strict_tools when stated, structured_outputs otherwise', () => {
    const strictTool = { type: 'function' as const, function: { name: 'g', strict: true } };
    assert.equal(rejected({ tools: [tool, strictTool] }, caps({ structured_outputs: true, strict_tools: false })), 'tools[1].function.strict');
    assert.equal(rejected({ tools: [strictTool] }, caps({ structured_outputs: true })), null);
    assert.equal(rejected({ tools: [strictTool] }, caps({})), 'tools[0].function.strict');
    assert.equal(rejected({ tools: [strictTool] }, caps({ strict_tools: true })), null);
  });

  test('JSON modes: json_object needs json_mode, non-strict schemas json_mode or structured outputs; combinations with tools', () => {
    assert.equal(rejected({ response_format: { type: 'json_object' } }, caps({ json_mode: false })), 'response_format');
    assert.equal(
      rejected({ response_format: { type: 'json_schema', json_schema: { name: 's', schema: {} } } }, caps({ json_mode: false, structured_outputs: true })),
      null,
    );
    assert.equal(rejected({ response_format: { type: 'text' } }, caps({ json_mode: false })), null);
    assert.equal(rejected({ response_format: { type: 'json_object' }, tools: [tool] }, caps({ json_mode_with_tools: false })), 'response_format');
    assert.equal(rejected({ tools: [tool, { type: 'web_search' }] }, caps({ web_search: true, web_search_with_tools: false })), 'tools[1]');
  });
});

describe('reasoning', () => {
  test('efforts must be listed; none is not turned into anything', () => {
    const limits = { limits: { reasoning_efforts: ['low' as const, 'high' as const] } };
    assert.equal(rejected({ reasoning_effort: 'none' }, limits), 'reasoning_effort');
    assert.equal(rejected({ reasoning_effort: 'medium' }, limits), 'reasoning_effort');
    assert.equal(rejected({ reasoning_effort: 'high' }, limits), null);
    assert.equal(rejected({ reasoning_effort: 'low' }, caps({ reasoning: false })), 'reasoning_effort');
    assert.equal(rejected({ reasoning_effort: 'low' }, { limits: { reasoning_efforts: [] } }), 'reasoning_effort');
  });

  test('thinking modes of the messages dialect have their own capabilities', () => {
    const base = decodeChatRequest({ model: 'x', messages: [{ role: 'user', content: 'hi' }] }).request;
    const budget = { ...base, reasoning: { kind: 'budget' as const, budgetTokens: 2048 } };
    assert.equal(rejected({}, caps({ thinking_manual: false }), [], budget), 'reasoning_effort');
    assert.equal(rejected({}, caps({}), [], budget), null);
    assert.equal(rejected({}, caps({}), [], { ...budget, toolChoice: { kind: 'required' }, tools: [{ name: 'f' }] }), 'tool_choice');
    assert.equal(rejected({}, caps({ thinking_adaptive: false }), [], { ...base, reasoning: { kind: 'adaptive' } }), 'reasoning_effort');
    assert.equal(rejected({}, caps({ thinking_disable: false }), [], { ...base, reasoning: { kind: 'disabled' } }), 'reasoning_effort');
  });
});

describe('limits', () => {
  test('output above the route maximum is named as the client sent it; the window checks the estimated prompt', () => {
    assert.equal(rejected({ max_completion_tokens: 11 }, { limits: { max_tokens: 10 } }), 'max_completion_tokens');
    assert.equal(rejected({ max_tokens: 10 }, { limits: { max_tokens: 10 } }), null);
    const words = 'hello world, these are a few ordinary words';
    const body = { messages: [{ role: 'user' as const, content: words }] };
    const estimate = estimatePromptTokens(decodeChatRequest({ model: 'gateway/unit', ...body }).request);
    assert.ok(estimate < Buffer.byteLength(words), 'the byte bound alone would reject this window');
    assert.equal(rejected(body, { limits: { context_window: estimate - 1 } }), 'messages');
    assert.equal(rejected(body, { limits: { context_window: estimate } }), null);
  });
});

describe('protocol parameters', () => {
  test('explicit values are rejected, even false; omission is not a value', () => {
    const unsupported: CanonicalParam[] = ['stop', 'logprobs', 'seed'];
    assert.equal(rejected({ logprobs: false }, {}, unsupported), 'logprobs');
    assert.equal(rejected({ stop: [] }, {}, unsupported), 'stop');
    assert.equal(rejected({ seed: 0 }, {}, unsupported), 'seed');
    assert.equal(rejected({ temperature: 1 }, {}, unsupported), null);
  });
});

describe('parameter constraints', () => {
  test('keys are the API names, dotted for nested values', () => {
    const chat = {
      parameters: {
        chat: {
          'response_format.type': { allowed_values: ['text'] },
          reasoning_effort: { allowed_values: ['high'] },
          tool_choice: { allowed_values: ['auto', 'none'] },
          seed: { supported: false },
          max_tokens: { maximum: 50 },
        },
      },
    };
    assert.equal(rejected({ response_format: { type: 'json_object' } }, chat), 'response_format');
    assert.equal(rejected({ reasoning_effort: 'low' }, chat), 'reasoning_effort');
    assert.equal(rejected({ tools: [tool], tool_choice: 'required' }, chat), 'tool_choice');
    assert.equal(rejected({ tools: [tool], tool_choice: 'auto' }, chat), null);
    assert.equal(rejected({ seed: 3 }, chat), 'seed');
    assert.equal(rejected({ max_completion_tokens: 51 }, chat), 'max_completion_tokens');
    assert.equal(rejected({ max_tokens: 50 }, chat), null);
  });

  test('extra_body options must be listed by the route', () => {
    const chat = { parameters: { chat: { 'extra_body.cloud_a.top_k': { type: 'integer' as const, minimum: 1 } } } };
    assert.equal(rejected({ extra_body: { cloud_a: { top_k: 3 } } }, chat), null);
    assert.equal(rejected({ extra_body: { cloud_a: { top_k: 0 } } }, chat), 'extra_body.cloud_a.top_k');
    assert.equal(rejected({ extra_body: { cloud_a: { top_p: 3 } } }, chat), 'extra_body.cloud_a.top_p');
    assert.equal(rejected({ extra_body: { gpu_pool: { seed: 1 } } }, {}), 'extra_body.gpu_pool.seed');
    assert.equal(rejected({ extra_body: {} }, {}), null);
  });

  test('constraintViolation: each field of a constraint', () => {
    assert.match(constraintViolation({ supported: false }, 1)!, /not supported/);
    assert.match(constraintViolation({ type: 'integer' }, 1.5)!, /type integer/);
    assert.equal(constraintViolation({ type: 'integer' }, 2), undefined);
    assert.match(constraintViolation({ type: 'object' }, [])!, /type object/);
    assert.match(constraintViolation({ allowed_values: ['a', 'b'] }, 'c')!, /supported values: "a", "b"/);
    assert.match(constraintViolation({ allowed_values: ['a'] }, ['a', 'c'])!, /"c"/);
    assert.equal(constraintViolation({ type: 'array', allowed_values: ['a'] }, ['a', 'a']), undefined);
    assert.match(constraintViolation({ minimum: 1 }, 0)!, /at least 1/);
    assert.match(constraintViolation({ maximum: 1 }, 2)!, /at most 1/);
    assert.equal(constraintViolation({}, 'anything'), undefined);
  });
});
