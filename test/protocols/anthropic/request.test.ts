import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CanonicalRequest } from '../../../src/canonical/index.ts';
import type { RouteEndpoint } from '../../../src/catalog/types.ts';
import { anthropicBody, buildAnthropicRequest, JSON_OBJECT_INSTRUCTION } from '../../../src/protocols/anthropic/request.ts';
import { simulatorEndpoint } from '../../simulators/endpoint.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';
import { canonicalRequest as request, rejectedField } from '../helpers.ts';

const here = import.meta.dirname;

function endpoint(overrides: Partial<RouteEndpoint> = {}): RouteEndpoint {
  return { ...simulatorEndpoint({ kind: 'anthropic', base_url: 'http://upstream.test/' }, 'claude-up'), ...overrides };
}

const user = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };
const base = { model: 'claude-up', max_tokens: 4096, messages: [user] };
const weatherTool = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

/**
 * Request bodies recorded in the shapes of Anthropic's public documentation (Messages API, tool use,
 * extended thinking, vision and PDF, structured outputs, prompt caching, web search), adapted only
 * where the gateway always sends the long form (content as blocks, system as blocks): the canonical
 * request must become exactly that body on the wire.
 */
describe('anthropic: canonical request → the documented request body (fixtures)', () => {
  const docs = endpoint({ upstreamModel: 'claude-sonnet-4-5' });
  const getWeather = {
    name: 'get_weather',
    description: 'Get the current weather in a given location',
    parameters: {
      type: 'object',
      properties: {
        location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'], description: "The unit of temperature, either 'celsius' or 'fahrenheit'" },
      },
      required: ['location'],
    },
  };
  const thinkingBlock = {
    type: 'thinking',
    thinking:
      'The user wants to know the current weather in Paris. I have access to a function `get_weather`, so I should call it with the location parameter.',
    signature: 'BDaL4VrbR2Oj0hO4XpJxT28J5TILnCrrUXoKiiNBZW9P+nr8XSj1zuZzAl4egiCCpQNvfyUuFFJP5CncdYZEQPPmLxYsNrcs',
  };
  const fixtures: Readonly<Record<string, CanonicalRequest>> = {
    'request-text.json': request({ maxOutputTokens: 1024 }, 'Hello, world'),
    'request-system-sampling.json': request(
      {
        system: [{ text: 'You are a seasoned data scientist at a Fortune 500 company.' }],
        maxOutputTokens: 2048,
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        stop: ['\n\nHuman:'],
        user: '13803d75-b4b5-4c3e-b2a2-6f21399b021b',
        stream: true,
      },
      'Analyze this dataset for anomalies: <dataset>{{DATASET}}</dataset>',
    ),
    'request-tools.json': request(
      {
        maxOutputTokens: 1024,
        tools: [
          { ...getWeather, strict: true },
          {
            name: 'get_time',
            description: 'Get the current time in a given time zone',
            parameters: {
              type: 'object',
              properties: { timezone: { type: 'string', description: 'The IANA time zone name, e.g. America/Los_Angeles' } },
              required: ['timezone'],
            },
            cacheControl: { type: 'ephemeral' },
          },
        ],
        toolChoice: { kind: 'tool', name: 'get_weather' },
        parallelToolCalls: false,
      },
      'What is the weather like in San Francisco?',
    ),
    // A chat client replays the tool call with the thinking it carried (blocks.ts), never the reasoning.
    'request-tool-loop-thinking.json': request({
      maxOutputTokens: 16000,
      reasoning: { kind: 'effort', effort: 'medium' },
      tools: [getWeather],
      messages: [
        { role: 'user', content: [{ type: 'text', text: "What's the weather in Paris?" }] },
        {
          role: 'assistant',
          content: [
            {
              type: 'tool_call',
              id: 'toolu_01CswdEQBMshySk6Y9DFKrfq',
              name: 'get_weather',
              arguments: '{"location":"Paris"}',
              signature: { family: 'anthropic', value: JSON.stringify([thinkingBlock]) },
            },
          ],
        },
        {
          role: 'tool',
          content: [{ type: 'tool_result', toolCallId: 'toolu_01CswdEQBMshySk6Y9DFKrfq', content: [{ type: 'text', text: 'Current temperature: 88°F' }] }],
        },
      ],
    }),
    'request-thinking.json': request(
      { dialect: 'messages', maxOutputTokens: 16000, reasoning: { kind: 'budget', budgetTokens: 10000 } },
      'Are there an infinite number of prime numbers such that n mod 4 == 3?',
    ),
    'request-images-documents.json': request({
      maxOutputTokens: 1024,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQSkZJRgABAQEASABIAAD' } },
            { type: 'image', source: { kind: 'url', url: 'https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg' } },
            { type: 'document', mediaType: 'application/pdf', data: 'JVBERi0xLjcKCjEgMCBvYmoK', title: 'report.pdf' },
            { type: 'document', mediaType: 'text/plain', data: 'The grass is green. The sky is blue.', title: 'My Document' },
            { type: 'text', text: 'Compare these images and documents.' },
          ],
        },
      ],
    }),
    'request-json-schema.json': request(
      {
        maxOutputTokens: 1024,
        responseFormat: {
          kind: 'json_schema',
          name: 'contact',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string' }, email: { type: 'string' }, plan_interest: { type: 'string' }, demo_requested: { type: 'boolean' } },
            required: ['name', 'email', 'plan_interest', 'demo_requested'],
            additionalProperties: false,
          },
        },
      },
      'Extract the key information from this email: John Smith (john@example.com) is interested in our Enterprise plan and wants to schedule a demo for next Tuesday at 2pm.',
    ),
    // The client's own 1h breakpoint is kept; the gateway's option adds its 5m one after it, as the
    // API wants longer-lived entries before shorter ones.
    'request-cache.json': request(
      {
        maxOutputTokens: 1024,
        system: [
          {
            text: 'You are an AI assistant tasked with analyzing literary works. Your goal is to provide insightful commentary and analysis on themes, characters, and writing style.\n',
          },
          { text: "<the entire contents of 'Pride and Prejudice'>", cacheControl: { type: 'ephemeral', ttl: '1h' } },
        ],
        cache: { mode: 'on', ttl: '5m' },
      },
      "Analyze the major themes in 'Pride and Prejudice'.",
    ),
    // max_uses: the most searches a per-query reservation covers (billing/search-units.ts).
    'request-web-search.json': request({ maxOutputTokens: 1024, webSearch: true }, "What's the weather in NYC?"),
  };
  for (const [fixture, canonical] of Object.entries(fixtures)) {
    test(fixture, () => {
      const wire = buildAnthropicRequest(canonical, docs, 'sk-ant', canonical.stream);
      assert.deepEqual(JSON.parse(wire.body), readJsonFixture(here, fixture));
    });
  }
});

describe('anthropic: canonical request → upstream body', () => {
  const rows: { name: string; request: CanonicalRequest; endpoint?: RouteEndpoint; expected: object }[] = [
    { name: 'minimal: max_tokens defaults to the bound the reservation assumed', request: request({}), expected: base },
    {
      name: 'max_tokens from the endpoint limit when the client gave none',
      request: request({}),
      endpoint: endpoint({ limits: { max_tokens: 64000 } }),
      expected: { ...base, max_tokens: 64000 },
    },
    {
      name: 'parallelToolCalls=false without a choice → auto with disable_parallel_tool_use; required → any',
      request: request({ tools: [weatherTool], parallelToolCalls: false }),
      expected: {
        ...base,
        tools: [{ name: 'get_weather', description: 'Weather', input_schema: weatherTool.parameters }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      },
    },
    {
      name: 'a tool declared without parameters takes an empty object schema',
      request: request({ tools: [{ name: 'get_time' }] }),
      expected: { ...base, tools: [{ name: 'get_time', input_schema: { type: 'object', properties: {} } }] },
    },
    {
      name: "web search beside function tools: the server tool after them; with the cache option on, the last tool's breakpoint is its own",
      request: request({ tools: [weatherTool], webSearch: true, cache: { mode: 'on' } }),
      expected: {
        ...base,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] }],
        tools: [
          { name: 'get_weather', description: 'Weather', input_schema: weatherTool.parameters },
          { type: 'web_search_20250305', name: 'web_search', max_uses: 5, cache_control: { type: 'ephemeral' } },
        ],
      },
    },
    {
      name: 'tool choice required → any',
      request: request({ tools: [weatherTool], toolChoice: { kind: 'required' } }),
      expected: { ...base, tools: [{ name: 'get_weather', description: 'Weather', input_schema: weatherTool.parameters }], tool_choice: { type: 'any' } },
    },
    {
      name: 'tool loop: consecutive tool results and the following text in one user turn, results first; thinking replayed only when Anthropic-signed',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather and time?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'I should call both.', signature: { family: 'anthropic', value: 'sig-a' } },
              { type: 'reasoning', text: '', redacted: true, signature: { family: 'anthropic', value: 'redacted-data' } },
              { type: 'reasoning', text: 'from another provider', signature: { family: 'gemini', value: 'g' } },
              { type: 'reasoning', text: 'unsigned' },
              { type: 'text', text: '' },
              { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool_call', id: 'toolu_2', name: 'get_time', arguments: '{}' },
            ],
          },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18C' }] }] },
          { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'toolu_2', content: [], isError: true }] },
          { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
        ],
      }),
      expected: {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather and time?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'I should call both.', signature: 'sig-a' },
              { type: 'redacted_thinking', data: 'redacted-data' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
              { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '18C' }] },
              { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true },
              { type: 'text', text: 'Thanks' },
            ],
          },
        ],
      },
    },
    {
      name: 'signed reasoning replayed by the client wins over what the tool call carries; a foreign or unreadable carrier adds nothing',
      request: request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Mine.', signature: { family: 'anthropic', value: 'sig-own' } },
              {
                type: 'tool_call',
                id: 't1',
                name: 'f',
                arguments: '{}',
                signature: { family: 'anthropic', value: JSON.stringify([{ type: 'thinking', thinking: 'Call it.', signature: 'sig-t' }]) },
              },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', toolCallId: 't1', content: [] }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 't2', name: 'f', arguments: '{}', signature: { family: 'anthropic', value: 'not json' } }] },
          { role: 'user', content: [{ type: 'tool_result', toolCallId: 't2', content: [] }] },
        ],
      }),
      expected: {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Mine.', signature: 'sig-own' },
              { type: 'tool_use', id: 't1', name: 'f', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1' }] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2' }] },
        ],
      },
    },
    {
      name: 'a user turn holding text before its tool results (messages dialect) still leads with the results',
      request: request({
        dialect: 'messages',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'here:' },
              { type: 'tool_result', toolCallId: 't', content: [{ type: 'text', text: 'ok' }] },
            ],
          },
        ],
      }),
      expected: {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'ok' }] },
              { type: 'text', text: 'here:' },
            ],
          },
        ],
      },
    },
    {
      name: 'json_object → a best-effort instruction after the system blocks',
      request: request({ system: [{ text: 'Be brief.' }], responseFormat: { kind: 'json_object' } }),
      expected: {
        ...base,
        system: [
          { type: 'text', text: 'Be brief.' },
          { type: 'text', text: JSON_OBJECT_INSTRUCTION },
        ],
      },
    },
    { name: 'text response format changes nothing', request: request({ responseFormat: { kind: 'text' } }), expected: base },
  ];
  for (const row of rows) {
    test(row.name, () => {
      assert.deepEqual(anthropicBody(row.request, row.endpoint ?? endpoint(), false), row.expected);
    });
  }

  test('tool-call arguments that do not parse to an object are a 400 naming the conversation, never {}', () => {
    for (const bad of ['{"city":', '', '[1]', 'null']) {
      const broken = request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'x' }] },
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: bad }] },
        ],
      });
      assert.throws(() => anthropicBody(broken, endpoint(), false), rejectedField('messages', 'invalid_value'));
    }
  });

  test('URL is base_url + /v1/messages; x-api-key and anthropic-version headers', () => {
    const wire = buildAnthropicRequest(request({}), endpoint(), 'sk-ant', true);
    assert.equal(wire.url, 'http://upstream.test/v1/messages');
    assert.deepEqual(wire.headers, {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': 'sk-ant',
      accept: 'text/event-stream',
    });
    assert.equal(buildAnthropicRequest(request({}), simulatorEndpoint({ kind: 'anthropic' }), undefined, false).url, 'https://api.anthropic.com/v1/messages');
  });

  test("a messages client's anthropic-beta values go upstream in the anthropic-beta header, only when given", () => {
    const wire = buildAnthropicRequest(request({ betas: ['context-1m-2025-08-07', 'files-api-2025-04-14'] }), endpoint(), 'sk-ant', false);
    assert.equal(wire.headers['anthropic-beta'], 'context-1m-2025-08-07,files-api-2025-04-14');
    assert.equal('anthropic-beta' in buildAnthropicRequest(request({}), endpoint(), 'sk-ant', false).headers, false);
  });
});

describe('anthropic: reasoning controls', () => {
  const thinking = (fields: Partial<CanonicalRequest>, at: RouteEndpoint = endpoint()) => {
    const body = anthropicBody(request(fields), at, false);
    return { thinking: body.thinking, output_config: body.output_config, max_tokens: body.max_tokens };
  };

  test('a budget, adaptive and disabled are sent as given', () => {
    assert.deepEqual(thinking({ dialect: 'messages', maxOutputTokens: 4000, reasoning: { kind: 'budget', budgetTokens: 2048 } }).thinking, {
      type: 'enabled',
      budget_tokens: 2048,
    });
    assert.deepEqual(thinking({ dialect: 'messages', reasoning: { kind: 'adaptive' } }).thinking, { type: 'adaptive' });
    assert.deepEqual(thinking({ dialect: 'messages', reasoning: { kind: 'disabled' } }).thinking, { type: 'disabled' });
  });

  test('a budget outside 1024 ≤ budget < max_tokens is refused, never resized', () => {
    for (const budgetTokens of [1000, 4000, 5000]) {
      assert.throws(() => thinking({ dialect: 'messages', maxOutputTokens: 4000, reasoning: { kind: 'budget', budgetTokens } }), rejectedField('reasoning'));
    }
  });

  test('effort none → thinking disabled', () => {
    assert.deepEqual(thinking({ reasoning: { kind: 'effort', effort: 'none' } }), {
      thinking: { type: 'disabled' },
      output_config: undefined,
      max_tokens: 4096,
    });
  });

  test('effort levels → a share of max_tokens as the budget (¼, ½, ¾), at least 1024', () => {
    const budget = (effort: 'low' | 'medium' | 'high', maxOutputTokens?: number) =>
      thinking({ maxOutputTokens, reasoning: { kind: 'effort', effort } }).thinking;
    assert.deepEqual(budget('low', 16000), { type: 'enabled', budget_tokens: 4000 });
    assert.deepEqual(budget('medium', 16000), { type: 'enabled', budget_tokens: 8000 });
    assert.deepEqual(budget('high', 16000), { type: 'enabled', budget_tokens: 12000 });
    assert.deepEqual(budget('low'), { type: 'enabled', budget_tokens: 1024 });
    assert.deepEqual(budget('low', 2000), { type: 'enabled', budget_tokens: 1024 });
  });

  test('an effort that leaves no room for the minimum budget is a 400 on the reasoning control', () => {
    assert.throws(() => thinking({ maxOutputTokens: 1024, reasoning: { kind: 'effort', effort: 'high' } }), rejectedField('reasoning'));
  });

  test('on a model without manual thinking, an effort → adaptive thinking + output_config.effort', () => {
    const adaptiveOnly = endpoint({ capabilities: { thinking_manual: false } });
    assert.deepEqual(
      thinking(
        { reasoning: { kind: 'effort', effort: 'medium' }, responseFormat: { kind: 'json_schema', name: 'a', schema: { type: 'object' } } },
        adaptiveOnly,
      ),
      {
        thinking: { type: 'adaptive' },
        output_config: { effort: 'medium', format: { type: 'json_schema', schema: { type: 'object' } } },
        max_tokens: 4096,
      },
    );
  });
});

describe('anthropic: the gateway cache option', () => {
  const conversation = request({
    system: [{ text: 'sys 1' }, { text: 'sys 2' }],
    tools: [weatherTool, { name: 'get_time' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'reply' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
    ],
  });
  const marks = (fields: Partial<CanonicalRequest>) => {
    const body = anthropicBody({ ...conversation, ...fields }, endpoint(), false);
    return {
      tools: body.tools?.map((tool) => tool.cache_control),
      system: body.system?.map((block) => block.cache_control),
      messages: body.messages.map((message) => message.content.map((block) => ('cache_control' in block ? block.cache_control : undefined))),
    };
  };
  const ttl1h = { type: 'ephemeral', ttl: '1h' };

  test('absent: nothing added', () => {
    assert.deepEqual(marks({}), {
      tools: [undefined, undefined],
      system: [undefined, undefined],
      messages: [[undefined], [undefined], [undefined, undefined]],
    });
  });

  test('on: the last user block, the last system block and the last tool, with the ttl', () => {
    assert.deepEqual(marks({ cache: { mode: 'on', ttl: '1h' } }), {
      tools: [undefined, ttl1h],
      system: [undefined, ttl1h],
      messages: [[undefined], [undefined], [undefined, ttl1h]],
    });
    assert.deepEqual(marks({ cache: { ttl: '5m' } }).system, [undefined, { type: 'ephemeral', ttl: '5m' }]);
    assert.deepEqual(marks({ cache: { mode: 'on' } }).tools, [undefined, { type: 'ephemeral' }]);
  });

  test("on: the client's own breakpoints count toward the limit of four and are kept", () => {
    const own = { type: 'ephemeral' as const };
    const result = marks({
      cache: { mode: 'on', ttl: '1h' },
      system: [{ text: 'sys 1', cacheControl: own }, { text: 'sys 2' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'first', cacheControl: own }] },
        { role: 'assistant', content: [{ type: 'text', text: 'reply' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b', cacheControl: own },
          ],
        },
      ],
    });
    // Three of the client's, so one more: the last user block already has one, the last system block gets it.
    assert.deepEqual(result, { tools: [undefined, undefined], system: [own, ttl1h], messages: [[own], [undefined], [undefined, own]] });
  });

  test("off: every breakpoint removed, the client's included", () => {
    const own = { type: 'ephemeral' as const };
    assert.deepEqual(
      marks({
        cache: { mode: 'off' },
        system: [{ text: 'sys', cacheControl: own }],
        tools: [{ name: 't', cacheControl: own }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cacheControl: own }] }],
      }),
      { tools: [undefined], system: [undefined], messages: [[undefined]] },
    );
  });
});
