/**
 * The benchmark's workload table: the Anthropic-format workloads compare the same work on every
 * target, the responses workload costs the upstream exactly what chat does, and the paced stream is
 * chat-stream's answer at one event a millisecond on every target.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { load as parseYaml } from 'js-yaml';
import { parseOptions } from '../../bench/options.ts';
import { GATEWAY_MODELS, MAX_TOKENS, WORKLOADS, type Workload, type WorkloadId } from '../../bench/workloads.ts';
import type { CanonicalRequest } from '../../src/canonical/index.ts';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';
import { decodeResponsesRequest } from '../../src/dialects/responses/decode.ts';
import { chatBody } from '../../src/protocols/openai-chat/request.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import { decodeEmbeddingsRequest } from '../../src/dialects/embeddings/decode.ts';
import { embeddingsRequestBody } from '../../src/protocols/openai-embeddings/request.ts';

const workload = (id: WorkloadId): Workload => WORKLOADS.find((candidate) => candidate.id === id)!;
const gatewayBody = (id: WorkloadId) => JSON.parse(workload(id).gateway('gw-key').body!);
const upstreamBody = (id: WorkloadId) => JSON.parse(workload(id).upstream.body!);

describe('bench workloads', () => {
  test('each id once; --only selects workloads by id; responses runs by default', () => {
    const ids = WORKLOADS.map((candidate) => candidate.id);
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual(parseOptions(['--only=messages,count-tokens']).workloads, ['count-tokens', 'messages']);
    assert.deepEqual(parseOptions(['--only=responses,chat']).workloads, ['chat', 'responses']);
    assert.ok(parseOptions([]).workloads.includes('responses'));
  });

  for (const id of ['messages', 'count-tokens'] as const) {
    test(`${id}: the gateway receives, on the same path with the same version header, the request the upstream receives but for the model`, () => {
      const { path, headers } = workload(id).gateway('gw-key');
      assert.equal(path, workload(id).upstream.path);
      assert.equal(headers['anthropic-version'], workload(id).upstream.headers['anthropic-version']);
      assert.equal(headers.authorization, 'Bearer gw-key');
      assert.deepEqual({ ...gatewayBody(id), model: undefined }, { ...upstreamBody(id), model: undefined });
      assert.equal(gatewayBody(id).model, GATEWAY_MODELS.claude);
    });
  }

  test("images: the upstream receives the generation the gateway sends it, in the family's default quality", () => {
    assert.equal(workload('images').gateway('gw-key').path, workload('images').upstream.path);
    assert.deepEqual(upstreamBody('images'), { model: 'bench-upstream-image', prompt: gatewayBody('images').prompt, n: 1, size: '256x256', quality: 'medium' });
    assert.equal(gatewayBody('images').model, GATEWAY_MODELS.image);
    assert.equal(gatewayBody('images').response_format, 'b64_json');
  });

  test('embeddings: 16 inputs as the openai SDK sends them (base64); the upstream receives the body the gateway sends it', () => {
    const body = gatewayBody('embeddings');
    assert.equal(body.model, GATEWAY_MODELS.embed);
    assert.equal(body.input.length, 16);
    assert.equal(body.encoding_format, 'base64');
    const { request } = decodeEmbeddingsRequest(body);
    assert.deepEqual(upstreamBody('embeddings'), embeddingsRequestBody(request, { upstreamModel: 'bench-upstream-embed' } as RouteEndpoint));
  });

  test('count-tokens: a request of about 2 KB, without the max_tokens a count does not take', () => {
    const size = Buffer.byteLength(workload('count-tokens').gateway('gw-key').body!);
    assert.ok(size >= 1900 && size <= 2200, `${size} bytes`);
    assert.equal(gatewayBody('count-tokens').max_tokens, undefined);
    assert.ok(gatewayBody('messages').max_tokens > 0);
  });

  test("responses: POST /v1/responses with chat's prompt as instructions and input, and chat's output limit, on chat's model", () => {
    const { method, path, headers } = workload('responses').gateway('gw-key');
    assert.equal(method, 'POST');
    assert.equal(path, '/v1/responses');
    assert.equal(headers.authorization, 'Bearer gw-key');
    const body = gatewayBody('responses');
    const [system, user] = gatewayBody('chat').messages;
    assert.deepEqual(body, { model: GATEWAY_MODELS.chat, instructions: system.content, input: user.content, max_output_tokens: MAX_TOKENS });
    assert.equal(gatewayBody('chat').max_tokens, MAX_TOKENS);
  });

  test("responses: the baselines are chat's, and the gateway sends the upstream the body it sends for chat", () => {
    assert.deepEqual(workload('responses').upstream, workload('chat').upstream);
    const upstreamOf = (decoded: { readonly request: CanonicalRequest }) => chatBody(decoded.request, 'upstream-model', false);
    assert.deepEqual(upstreamOf(decodeResponsesRequest(gatewayBody('responses'))), upstreamOf(decodeChatRequest(gatewayBody('chat'))));
  });

  test("chat-stream-paced: chat-stream's request, its upstream at one event a millisecond on every target", () => {
    assert.deepEqual({ ...gatewayBody('chat-stream-paced'), model: undefined }, { ...gatewayBody('chat-stream'), model: undefined });
    assert.equal(gatewayBody('chat-stream-paced').model, GATEWAY_MODELS.chatPaced);
    assert.equal(workload('chat-stream-paced').gateway('gw-key').path, workload('chat-stream').gateway('gw-key').path);
    // The bare proxy and the direct run ask the simulator for the pace on the path...
    assert.equal(workload('chat-stream-paced').upstream.path, `/hold/1${workload('chat-stream').upstream.path}`);
    assert.equal(workload('chat-stream-paced').upstream.body, workload('chat-stream').upstream.body);
    // ...and the gateway's model reaches it through a provider at the same pace.
    const config = parseYaml(readFileSync(new URL('../../bench/config.yaml', import.meta.url), 'utf8')) as {
      providers: { id: string; base_url: string }[];
      models: { id: string; endpoints: { provider: string }[] }[];
    };
    const model = config.models.find((candidate) => candidate.id === GATEWAY_MODELS.chatPaced)!;
    const provider = config.providers.find((candidate) => candidate.id === model.endpoints[0].provider)!;
    assert.equal(provider.base_url, '{{upstream}}/hold/1/v1');
  });
});
