/** The built-in simulated provider: deterministic replies that behave like a real model where the gateway needs it. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Ajv } from 'ajv';
import type { CanonicalRequest, StreamEvent } from '../../src/canonical/index.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import { GatewayError } from '../../src/core/errors.ts';
import { StreamAccumulator } from '../../src/pipeline/accumulate.ts';
import { createSimulatedProtocol } from '../../src/protocols/simulated/protocol.ts';
import { minimalInstance } from '../../src/protocols/simulated/schema-instance.ts';
import { chatRequest, endpoint, routeOf } from '../chat/helpers.ts';

const route = routeOf(endpoint('sim-unit', { limits: { max_tokens: 500 } }));
const context = (signal = new AbortController().signal) => ({ apiKey: undefined, signal, requestId: 'req_test' });

async function collect(request: CanonicalRequest, at: RouteEndpoint = route, signal?: AbortSignal): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const batch of createSimulatedProtocol().stream(request, at, context(signal))) events.push(...batch);
  return events;
}

describe('simulated protocol', () => {
  test('deterministic: the same request gets the same reply, streamed or not', async () => {
    const protocol = createSimulatedProtocol();
    const request = chatRequest({ messages: [{ role: 'user', content: 'Same question twice' }] });
    const first = await protocol.complete(request, route, context());
    assert.deepEqual(await protocol.complete(request, route, context()), first);
    const accumulator = new StreamAccumulator();
    const events = await collect({ ...request, stream: true });
    for (const event of events) accumulator.observe(event);
    const finish = events.at(-1)!;
    assert.equal(finish.type, 'finish');
    assert.deepEqual(accumulator.result(first.finish, accumulator.usage), { ...first, webSearch: undefined });
  });

  test('stream events keep the ordering contract: start first, start/delta/end per part, usage, finish last', async () => {
    const events = await collect(chatRequest({ reasoning_effort: 'low', tools: [{ type: 'web_search' }] }));
    assert.equal(events[0].type, 'start');
    assert.equal(events.at(-1)!.type, 'finish');
    const types = events.map((event) => event.type);
    assert.ok(types.indexOf('reasoning-start') < types.indexOf('reasoning-delta') && types.lastIndexOf('reasoning-delta') < types.indexOf('reasoning-end'));
    assert.ok(types.indexOf('reasoning-end') < types.indexOf('text-start'));
    assert.ok(types.includes('web-search') && types.indexOf('usage') > types.indexOf('text-end'));
  });

  test('tool calls: arguments valid against the tool schema, only when tool_choice allows', async () => {
    const protocol = createSimulatedProtocol();
    const parameters = {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 3 },
        when: { type: 'string', format: 'date' },
        options: { $ref: '#/$defs/options' },
        count: { type: 'integer', exclusiveMinimum: 2, maximum: 10 },
        ratio: { type: 'number', minimum: 0.5, multipleOf: 0.25 },
        mode: { anyOf: [{ type: 'string', enum: ['fast', 'slow'] }, { type: 'null' }] },
      },
      required: ['city', 'when', 'options', 'count', 'ratio', 'mode'],
      additionalProperties: false,
      $defs: { options: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, minItems: 2 } }, required: ['tags'] } },
    };
    const tools = [{ type: 'function' as const, function: { name: 'plan', parameters } }];
    const result = await protocol.complete(chatRequest({ tools }), route, context());
    assert.equal(result.finish.reason, 'tool_calls');
    const call = result.content.find((part) => part.type === 'tool_call');
    assert.ok(call && call.type === 'tool_call');
    const validate = new Ajv({ strict: false }).compile(parameters);
    assert.ok(validate(JSON.parse(call.arguments)), JSON.stringify(validate.errors));
    const none = await protocol.complete(chatRequest({ tools, tool_choice: 'none' }), route, context());
    assert.equal(none.finish.reason, 'stop');
  });

  test('minimalInstance satisfies common schema keywords', () => {
    const schemas = [
      { type: 'object', properties: { a: { type: 'string', format: 'email' }, b: { const: 7 } }, required: ['a', 'b'] },
      { type: 'array', items: { type: 'integer', minimum: 5 }, minItems: 3 },
      {
        allOf: [
          { type: 'object', properties: { a: { type: 'boolean' } }, required: ['a'] },
          { type: 'object', properties: { b: { type: 'null' } }, required: ['b'] },
        ],
      },
      { type: ['string', 'null'] },
      { type: 'number', exclusiveMaximum: 0 },
      { type: 'object', minProperties: 1, properties: { x: { type: 'string' } } },
    ];
    for (const schema of schemas) {
      const validate = new Ajv({ strict: false, validateFormats: false }).compile(schema);
      assert.ok(validate(minimalInstance(schema)), `${JSON.stringify(schema)}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('the output budget ends the reply with finish length; usage counts what was produced', async () => {
    const protocol = createSimulatedProtocol();
    const result = await protocol.complete(chatRequest({ max_tokens: 4 }), route, context());
    assert.equal(result.finish.reason, 'length');
    assert.equal(result.usage.outputTokens, 4);
  });

  test('cache on: a long prefix is written once, then read', async () => {
    const protocol = createSimulatedProtocol();
    const request = chatRequest({
      gateway: { cache: 'on' },
      messages: [
        { role: 'system', content: 'context '.repeat(1100) },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'second' },
      ],
    });
    const first = await protocol.complete(request, route, context());
    const second = await protocol.complete(request, route, context());
    assert.ok(first.usage.cacheWriteTokens >= 1024 && first.usage.cacheReadTokens === 0);
    assert.equal(second.usage.cacheReadTokens, first.usage.cacheWriteTokens);
    assert.equal(second.usage.inputTokens + second.usage.cacheReadTokens, first.usage.inputTokens + first.usage.cacheWriteTokens);
    const short = await protocol.complete(chatRequest({ gateway: { cache: 'on' } }), route, context());
    assert.equal(short.usage.cacheWriteTokens, 0);
  });

  test('an aborted stream stops between deltas', async () => {
    const slow = routeOf(endpoint('sim-slow', { provider: 'sim' }));
    const paced = { ...slow, provider: { ...slow.provider, simulated: { chunk_delay_ms: 5 } } };
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    for await (const batch of createSimulatedProtocol().stream(
      chatRequest({ messages: [{ role: 'user', content: 'a '.repeat(40) }] }),
      paced,
      context(controller.signal),
    )) {
      events.push(...batch);
      if (batch.some((event) => event.type === 'text-delta')) controller.abort();
    }
    assert.equal(events.filter((event) => event.type === 'text-delta').length, 1);
    assert.ok(!events.some((event) => event.type === 'finish'));
  });

  test('a replayed tool call with an altered signature is refused before any event', async () => {
    const protocol = createSimulatedProtocol();
    const tools = [{ type: 'function' as const, function: { name: 'f' } }];
    const first = await protocol.complete(chatRequest({ tools }), route, context());
    const call = first.content.find((part) => part.type === 'tool_call')!;
    assert.ok(call.type === 'tool_call');
    const replay = (extraContent: Record<string, unknown> | undefined) =>
      chatRequest({
        tools,
        messages: [
          { role: 'user', content: 'hello' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
                ...(extraContent ? { extra_content: extraContent } : {}),
              },
            ],
          },
          { role: 'tool', tool_call_id: call.id, content: 'done' },
        ],
      });
    const ok = await protocol.complete(replay(call.extraContent as Record<string, unknown>), route, context());
    assert.deepEqual(ok.content, [{ type: 'text', text: 'The tool returned: done' }]);
    // A dialect that cannot carry the signature replays the call without it: accepted.
    await protocol.complete(replay(undefined), route, context());
    await assert.rejects(
      protocol.complete(replay({ simulated: { signature: 'x' } }), route, context()),
      (error) => error instanceof GatewayError && error.status === 400,
    );
    await assert.rejects(collect(replay({ simulated: { signature: 'x' } })), GatewayError);
  });
});
