/**
 * Bounded work per request (docs/security.md, "Limits"): whatever a body asks for, the gateway's
 * work on it is bounded by a limit checked before the work, and a body past a limit is a 400 in the
 * envelope — before any credit is held, so a key with no credit gets the 400, not a 402. Over real
 * HTTP on the demo catalog, which is what a newcomer runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_TOKENIZED_CHARS, estimatePromptTokens } from '../../src/tokens/estimate.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { chatRequest, endpoint, model, simulatedConfig } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { blackPng, pngBomb, pngFile } from './files.ts';
import { deflateSync } from 'node:zlib';

const FREE = 'gateway/quill-1-free';
const IMAGE = 'gateway/prism-image-2';
/** RSS may move this much while a request is answered; a bomb's inflation is many times more. */
const RSS_SLACK = 64 * 1024 * 1024;

/** `{"a":{"a":…}}` nested `levels` deep, as text: building it as an object and stringifying would itself overflow. */
const nested = (levels: number, leaf = '{}') => `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;

describe('bounded work per request', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ creditUsd: '0' });
  });
  after(() => gateway.close());

  const chat = (body: unknown) => call(gateway.baseUrl, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: body });
  const edit = (body: unknown) => call(gateway.baseUrl, 'POST', '/v1/images/edits', { key: gateway.apiKey, json: body });

  test('a response schema asking for 100,000 items nested twice is a 400 naming response_format, not an out-of-memory crash', async () => {
    const schema = { type: 'array', minItems: 100_000, items: { type: 'array', minItems: 100_000, items: { type: 'string' } } };
    const response = await chat({
      model: FREE,
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'grid', schema } },
    });
    assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'response_format' });
    assert.match(response.body.error.message, /100000 items in one array; at most 5,000/);
  });

  test('a schema asking for a string of a billion characters is a 400, not a 500', async () => {
    const response = await chat({
      model: FREE,
      messages: [{ role: 'user', content: 'hi' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'long', schema: { type: 'object', properties: { s: { type: 'string', minLength: 1e9 } }, required: ['s'] } },
      },
    });
    assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'response_format' });
  });

  test('a schema within the bounds is answered with a valid instance', async () => {
    const schema = { type: 'object', properties: { tags: { type: 'array', minItems: 3, items: { type: 'string', minLength: 2 } } }, required: ['tags'] };
    const response = await chat({
      model: FREE,
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'tags', schema } },
    });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(JSON.parse(response.body.choices[0].message.content), { tags: ['xx', 'xx', 'xx'] });
  });

  test('a 3,000-level tool schema on a background response is a 400 up front, as in the foreground', async () => {
    const body = (background: boolean) =>
      `{"model":"${FREE}","input":"hi","background":${background},"tools":[{"type":"function","name":"deep","parameters":${nested(3000, '{"type":"object"}')}}]}`;
    for (const background of [true, false]) {
      const response = await call(gateway.baseUrl, 'POST', '/v1/responses', {
        key: gateway.apiKey,
        headers: { 'content-type': 'application/json' },
        body: body(background),
      });
      assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: null });
      assert.match(response.body.error.message, /deeper than 64 levels/);
    }
  });

  test('the depth bound holds on every body: chat, messages, count_tokens, the admin-less routes alike', async () => {
    for (const path of ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/images/generations', '/v1/videos/generations']) {
      const response = await call(gateway.baseUrl, 'POST', path, {
        key: gateway.apiKey,
        headers: { 'content-type': 'application/json' },
        body: `{"model":"x","deep":${nested(65)}}`,
      });
      assert.equal(response.status, 400, `${path}: ${response.text}`);
      assert.match(response.text, /deeper than 64 levels/);
    }
    // 64 levels in all is within the bound: the body reaches validation (which refuses the unknown field).
    const within = await chat({ model: FREE, messages: [{ role: 'user', content: 'hi' }], deep: JSON.parse(nested(62)) });
    assertError(within, { status: 400, type: 'invalid_request_error' });
    assert.doesNotMatch(within.body.error.message, /levels/);
  });

  test('a PNG bomb in any image field is a 400 before credit is held, and the process does not inflate it', async () => {
    const bomb = (await pngBomb(256 * 1024 * 1024)).toString('base64');
    const mask = blackPng(1, 1).toString('base64');
    const rssBefore = process.memoryUsage.rss();
    for (const body of [
      { model: IMAGE, prompt: 'p', image: bomb },
      { model: IMAGE, prompt: 'p', image: mask, mask: bomb },
    ]) {
      const response = await edit(body);
      assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: body.mask === bomb ? 'mask' : 'image' });
      assert.match(response.body.error.message, /inflates to more than the 5 bytes its header declares/);
    }
    const form = new FormData();
    form.set('model', IMAGE);
    form.set('prompt', 'p');
    form.set('image', new Blob([Buffer.from(bomb, 'base64')], { type: 'image/png' }), 'bomb.png');
    const multipart = await fetch(`${gateway.baseUrl}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${gateway.apiKey}` }, body: form });
    assert.equal(multipart.status, 400);
    const growth = process.memoryUsage.rss() - rssBefore;
    assert.ok(growth < RSS_SLACK, `RSS grew by ${Math.round(growth / 1048576)} MiB`);
    // The same key's valid edit gets as far as the hold: the 400 above came first.
    const valid = await edit({ model: IMAGE, prompt: 'p', image: mask });
    assertError(valid, { status: 402, type: 'insufficient_quota_error' });
  });

  test('a PNG whose chunk CRC is wrong, or whose image data is short, is a 400', async () => {
    const rows = deflateSync(Buffer.alloc(2 * (1 + 2 * 4)));
    for (const file of [
      pngFile(2, 2, rows, { ihdrCrc: 0x12345678 }),
      pngFile(2, 2, deflateSync(Buffer.alloc(5))),
      pngFile(2, 2, rows.subarray(0, rows.length - 3)),
    ]) {
      const response = await edit({ model: IMAGE, prompt: 'p', image: file.toString('base64') });
      assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'image' });
    }
    assert.equal((await edit({ model: IMAGE, prompt: 'p', image: pngFile(2, 2, rows).toString('base64') })).status, 402);
  });

  test('an id over 100 characters is a 400 in the envelope, not a 414', async () => {
    for (const path of [`/v1/responses/resp_${'a'.repeat(120)}`, `/v1/outputs/req_${'a'.repeat(120)}`, `/v1/videos/generations/${'v'.repeat(101)}`]) {
      const response = await call(gateway.baseUrl, 'GET', path, { key: gateway.apiKey });
      assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value' });
    }
  });
});

describe('bounded work per request: tool schemas', () => {
  let withTools: TestGateway;
  before(async () => {
    withTools = await startGateway({ config: simulatedConfig([model('gateway/tools', [endpoint('sim-tools')])]) });
  });
  after(() => withTools.close());

  test('breadth within each bound but too much in all is refused by the total budget; a tool schema is named as tools', async () => {
    const schema = {
      type: 'object',
      properties: { rows: { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'integer' } } } },
      required: ['rows'],
    };
    const response = await call(withTools.baseUrl, 'POST', '/v1/chat/completions', {
      key: withTools.apiKey,
      json: {
        model: 'gateway/tools',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'fill', parameters: schema } }],
        tool_choice: 'required',
      },
    });
    assertError(response, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'tools' });
    assert.match(response.body.error.message, /over 200,000 values and characters/);
  });
});

describe('bounded work per request: the tokenizer', () => {
  test('a prompt of 4 MB of words is tokenized only up to the bound; the rest counts at its byte bound', () => {
    const head = 'hello world '.repeat(MAX_TOKENIZED_CHARS / 12 + 1).slice(0, MAX_TOKENIZED_CHARS);
    const tail = 'x '.repeat(2_000_000);
    const request = chatRequest({ messages: [{ role: 'user', content: head + tail }] });
    const estimate = estimatePromptTokens(request);
    // Were the whole prompt tokenized, `tail` would count about 2,000,000 tokens, not its 4,000,000 bytes.
    assert.equal(estimate, estimatePromptTokens(chatRequest({ messages: [{ role: 'user', content: head }] })) + Buffer.byteLength(tail));
    assert.ok(estimate >= countTextTokens(head + tail), 'never below the tokenizer');
  });
});
