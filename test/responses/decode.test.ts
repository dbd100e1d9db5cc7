/** The Responses body → canonical request mapping, its unsupported fields, its cross-field rules, and the names errors use. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeResponsesRequest } from '../../src/dialects/responses/decode.ts';
import type { ResponsesBody, ResponsesInputItem } from '../../src/dialects/responses/schema.ts';
import { encodeResponse } from '../../src/dialects/responses/encode.ts';
import { ZERO_USAGE, type CanonicalResult, type ReasoningPart, type ToolCallPart } from '../../src/canonical/index.ts';
import { assertRejected } from '../helpers/errors.ts';

const decode = (body: Partial<ResponsesBody>) => decodeResponsesRequest({ model: 'gateway/m', input: 'hi', ...body });

const parameters = { type: 'object', properties: { city: { type: 'string' } } };

function rejects(body: Partial<ResponsesBody>, expected: { code: string; param: string; message?: RegExp }): void {
  assertRejected(() => decode(body), expected);
}

describe('decodeResponsesRequest', () => {
  test('the fields map one to one; omitted fields stay undefined', () => {
    const { request } = decode({ instructions: 'be brief', max_output_tokens: 64, temperature: 1.5, top_p: 0.9, user: 'u-1', stream: true });
    assert.equal(request.dialect, 'responses');
    assert.deepEqual(request.system, [{ text: 'be brief' }]);
    assert.deepEqual(request.messages, [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    assert.equal(request.maxOutputTokens, 64);
    assert.equal(request.temperature, 1.5);
    assert.equal(request.topP, 0.9);
    assert.equal(request.user, 'u-1');
    assert.equal(request.stream, true);
    const bare = decode({}).request;
    for (const field of [
      'maxOutputTokens',
      'temperature',
      'topP',
      'user',
      'tools',
      'toolChoice',
      'parallelToolCalls',
      'reasoning',
      'responseFormat',
      'webSearch',
    ] as const) {
      assert.equal(bare[field], undefined, field);
    }
    assert.equal(bare.stream, false);
    assert.deepEqual(bare.system, []);
  });

  test('items: messages of every role, parts, function calls grouped with the assistant turn, outputs as tool messages', () => {
    const { request, names } = decode({
      input: [
        { role: 'developer', content: 'dev rules' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'low' },
          ],
        },
        { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'checking', annotations: [] }] },
        { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}', id: 'fc_1', status: 'completed' },
        { type: 'function_call', call_id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        { type: 'function_call_output', call_id: 'call_2', output: 'rain' },
        { role: 'system', content: [{ type: 'input_text', text: 'sys' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'thanks' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
      ],
    });
    assert.deepEqual(request.system, [{ text: 'dev rules' }, { text: 'sys' }]);
    assert.deepEqual(request.messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' }, detail: 'low' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'checking' },
          { type: 'tool_call', id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_2', name: 'weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_1', name: 'weather', content: [{ type: 'text', text: 'sunny' }] }] },
      { role: 'tool', content: [{ type: 'tool_result', toolCallId: 'call_2', name: 'weather', content: [{ type: 'text', text: 'rain' }] }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'thanks' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
        ],
      },
    ]);
    // Policy names an image by its item in `input`, not by the canonical message index.
    assert.equal(names.name({ kind: 'image', messageIndex: 4, partIndex: 1 }), 'input[8].content[1]');
    assert.equal(names.name({ kind: 'image', messageIndex: 0, partIndex: 1 }), 'input[1].content[1]');
    assert.equal(names.name({ kind: 'field', field: 'messages' }), 'input');
  });

  test('an assistant string and a refusal part are text; a function call without an assistant message opens a turn', () => {
    const { request } = decode({
      input: [
        { role: 'user', content: 'q' },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'r' },
        { role: 'assistant', content: 'plain' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
      ],
    });
    assert.deepEqual(request.messages[1], { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }] });
    assert.deepEqual(request.messages[3], {
      role: 'assistant',
      content: [
        { type: 'text', text: 'plain' },
        { type: 'text', text: 'no' },
      ],
    });
  });

  test('returned reasoning items go back as the reasoning of the assistant turn they open; an empty summary adds nothing', () => {
    const { request } = decode({
      input: [
        { role: 'user', content: 'q' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'reasoning', id: 'rs_2', summary: [{ type: 'summary_text', text: 'think' }], status: 'completed' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a' }] },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c', output: 'r' },
        { type: 'reasoning', summary: [] },
        { role: 'user', content: 'next' },
      ],
    });
    assert.deepEqual(request.messages[1], {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'think' },
        { type: 'text', text: 'a' },
        { type: 'tool_call', id: 'c', name: 'f', arguments: '{}' },
      ],
    });
    assert.deepEqual(
      request.messages.map((message) => message.role),
      ['user', 'assistant', 'tool', 'user'],
    );
  });

  test('provider data the gateway returned comes back: reasoning signatures and function call data, as encoded', () => {
    const reasoning: ReasoningPart = { type: 'reasoning', text: 'think', signature: { family: 'anthropic', value: 'sig' } };
    const call: ToolCallPart = {
      type: 'tool_call',
      id: 'c',
      name: 'f',
      arguments: '{}',
      signature: { family: 'gemini', value: 'thought' },
      extraContent: { google: { thought_signature: 'thought' } },
    };
    const redacted = { family: 'anthropic' as const, value: 'hidden' };
    const output = encodeResponse(
      { content: [reasoning, call], finish: { reason: 'tool_calls', raw: null }, usage: ZERO_USAGE } satisfies CanonicalResult,
      { requestId: 'req_abc', request: decode({}).request, modelId: 'gateway/m', endpoint: {} as never, createdAt: 0 },
      { usage: ZERO_USAGE, searchUnits: 0, charged: 0n, overHold: 0n },
    ).output;
    const { request } = decode({
      input: [
        { role: 'user', content: 'q' },
        ...(output as unknown as ResponsesInputItem[]),
        { type: 'reasoning', summary: [], encrypted_content: Buffer.from(JSON.stringify(redacted)).toString('base64url') },
        { type: 'function_call_output', call_id: 'c', output: 'r' },
      ],
    });
    assert.deepEqual(request.messages[1], {
      role: 'assistant',
      content: [reasoning, call, { type: 'reasoning', text: '', signature: redacted, redacted: true }],
    });
  });

  test('bad image URLs and empty conversations are 400s naming the item', () => {
    rejects(
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://x' }] }] },
      { code: 'invalid_value', param: 'input[0].content[0].image_url' },
    );
    rejects({ input: [{ role: 'system', content: 'only' }] }, { code: 'invalid_value', param: 'input' });
    rejects(
      {
        input: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: [] },
        ],
      },
      { code: 'invalid_value', param: 'input[1].content' },
    );
  });

  test('function tools in the nested and the flat shape decode alike; strict is named where it was written', () => {
    const { request, names } = decode({
      tools: [
        { type: 'function', function: { name: 'nested', description: 'n', parameters, strict: true } },
        { type: 'function', name: 'flat', parameters, strict: true },
        { type: 'function', name: 'bare', parameters: null, strict: null },
      ],
    });
    assert.deepEqual(request.tools, [
      { name: 'nested', description: 'n', parameters, strict: true },
      { name: 'flat', parameters, strict: true },
      { name: 'bare' },
    ]);
    assert.equal(names.name({ kind: 'tool-strict', toolIndex: 0 }), 'tools[0].function.strict');
    assert.equal(names.name({ kind: 'tool-strict', toolIndex: 1 }), 'tools[1].strict');
  });

  test('tool_choice: strings, a named function, and choices that cannot be satisfied', () => {
    const tools: ResponsesBody['tools'] = [{ type: 'function', name: 'f', parameters }];
    assert.deepEqual(decode({ tools, tool_choice: 'required' }).request.toolChoice, { kind: 'required' });
    assert.deepEqual(decode({ tools, tool_choice: 'none' }).request.toolChoice, { kind: 'none' });
    assert.deepEqual(decode({ tools, tool_choice: { type: 'function', name: 'f' } }).request.toolChoice, { kind: 'tool', name: 'f' });
    assert.equal(decode({ tool_choice: 'auto' }).request.toolChoice, undefined);
    rejects({ tool_choice: 'required' }, { code: 'invalid_value', param: 'tool_choice' });
    rejects({ tools, tool_choice: { type: 'function', name: 'g' } }, { code: 'invalid_value', param: 'tool_choice.name' });
    assert.equal(decode({ tools, tool_choice: 'auto' }).names.name({ kind: 'field', field: 'toolChoice' }), 'tool_choice');
  });

  test('reasoning_effort and reasoning.effort are one setting; none is kept; a disagreement is a 400', () => {
    const top = decode({ reasoning_effort: 'none' });
    assert.deepEqual(top.request.reasoning, { kind: 'effort', effort: 'none' });
    assert.equal(top.names.name({ kind: 'field', field: 'reasoning' }), 'reasoning_effort');
    const nested = decode({ reasoning: { effort: 'none' } });
    assert.deepEqual(nested.request.reasoning, { kind: 'effort', effort: 'none' });
    assert.equal(nested.names.name({ kind: 'field', field: 'reasoning' }), 'reasoning.effort');
    assert.deepEqual(decode({ reasoning_effort: 'high', reasoning: { effort: 'high' } }).request.reasoning, { kind: 'effort', effort: 'high' });
    assert.equal(decode({ reasoning: {} }).request.reasoning, undefined);
    rejects({ reasoning_effort: 'none', reasoning: { effort: 'low' } }, { code: 'invalid_value', param: 'reasoning.effort' });
  });

  test('what the endpoint does not implement is unsupported_parameter naming the field', () => {
    rejects({ previous_response_id: 'resp_x' }, { code: 'unsupported_parameter', param: 'previous_response_id' });
    rejects({ response_format: { type: 'json_object' } }, { code: 'unsupported_parameter', param: 'response_format' });
    rejects({ text: { format: { type: 'json_object' } } }, { code: 'unsupported_parameter', param: 'text.format' });
    rejects({ parallel_tool_calls: false }, { code: 'unsupported_parameter', param: 'parallel_tool_calls' });
    rejects({ tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] }, { code: 'unsupported_parameter', param: 'tools[1]' });
    rejects({ tools: [{ type: 'web_search_preview' }] }, { code: 'unsupported_parameter', param: 'tools[0]' });
    assert.equal(decode({ background: false }).request.stream, false);
    assert.equal(decode({ background: true, stream: true }).request.stream, false, 'a background response answers JSON');
  });

  test('the gateway options are shared with the other dialects', () => {
    const { request } = decode({ models: ['gateway/m', 'gateway/b', 'gateway/b'], provider: { sort: 'price' }, gateway: { cache: 'on' } });
    assert.deepEqual(request.fallbackModels, ['gateway/b']);
    assert.deepEqual(request.provider, { sort: 'price', allowFallbacks: undefined });
    assert.deepEqual(request.cache, { mode: 'on', ttl: undefined });
    assert.equal(decode({ max_output_tokens: 5 }).names.name({ kind: 'field', field: 'maxOutputTokens' }), 'max_output_tokens');
  });
});
