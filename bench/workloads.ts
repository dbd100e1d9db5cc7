/**
 * What the benchmark sends. Each workload has the request a gateway client sends and the request
 * the upstream receives for the same work: the latter goes straight to the simulator ("direct") and
 * through the bare proxy, which is how the gateway's cost is isolated. Model ids are those of
 * bench/config.yaml.
 */
import type { RequestSpec } from './request-spec.ts';

export type WorkloadId =
  | 'chat'
  | 'chat-stream'
  | 'chat-stream-paced'
  | 'models'
  | 'count-tokens'
  | 'messages'
  | 'messages-stream'
  | 'responses'
  | 'chat-anthropic'
  | 'chat-idempotent'
  | 'images'
  | 'embeddings'
  | 'chat-limited';

export interface Workload {
  readonly id: WorkloadId;
  readonly title: string;
  /** The request as the upstream receives it (direct and through the bare proxy). */
  readonly upstream: RequestSpec;
  /** The request as a client of the gateway sends it. */
  gateway(apiKey: string): RequestSpec;
  /**
   * How the gateway's support is established before measuring: any 2xx, or a second identical
   * request answered with `Idempotent-Replayed: true`.
   */
  readonly probe: 'success' | 'idempotent-replay';
  /**
   * Which of the benchmark's keys the gateway request carries: the plain one (no limits), or one
   * with every limit of docs/limits.md set too high to refuse anything, to measure what limiting costs.
   */
  readonly key?: 'plain' | 'limited';
  /** The same work through Portkey's OpenAI-compatible route, when it applies. */
  portkey?(upstreamOrigin: string): RequestSpec;
}

/** Catalog ids (bench/config.yaml). */
export const GATEWAY_MODELS = {
  chat: 'gateway/bench-chat',
  chatFirst: 'gateway/bench-chat-first',
  chatHold: 'gateway/bench-chat-hold',
  chatPaced: 'gateway/bench-chat-paced',
  claude: 'gateway/bench-claude',
  image: 'gateway/bench-image',
  embed: 'gateway/bench-embed',
  video: 'gateway/bench-video',
} as const;
/** Upstream model names the simulator receives (it answers every name the same way). */
const UPSTREAM_CHAT_MODEL = 'bench-upstream-chat';
const UPSTREAM_CLAUDE_MODEL = 'bench-upstream-claude';
const UPSTREAM_IMAGE_MODEL = 'bench-upstream-image';
const IMAGE_PROMPT = 'A lighthouse on a rocky coast at dusk, watercolour, soft light';
const UPSTREAM_EMBEDDING_MODEL = 'bench-upstream-embed';
/** A batch of 16 short documents, as a retrieval application indexes them. */
const EMBEDDING_INPUTS = Array.from(
  { length: 16 },
  (_, index) => `Chapter ${index + 1}: the clerk writes home about the voyage, the cargo and the weather off the coast.`,
);
const UPSTREAM_KEY = 'bench-upstream-key';
const ANTHROPIC_VERSION = '2023-06-01';
export const MAX_TOKENS = 256;
const IDEMPOTENCY_KEY = 'bench-replay-0001';

const SYSTEM_PROMPT = 'You are a concise assistant for an online bookshop. Answer in at most three sentences.';
/** With the system prompt, about 1 KB of prompt text. */
const USER_PROMPT = [
  'I am looking for a present for my aunt, who reads mostly historical fiction and the occasional',
  'biography. She enjoyed long novels set in the eighteenth century, especially ones with sea voyages,',
  'trading companies and letters between characters, and she disliked books whose endings felt rushed.',
  'She already owns most of the classics and a few recent prize winners, so I would prefer something',
  'published in the last ten years that is not too well known. The budget is about thirty euros,',
  'hardcover if possible, and it should arrive before the end of next week. Could you suggest two or',
  'three titles, say in one sentence each why she might like them, and tell me whether any of them',
  'is part of a series, because she prefers to start at the first volume? If nothing fits, a good',
  'biography of a navigator or a merchant of that period would also be welcome.',
].join(' ');

const chatMessages = [
  { role: 'system', content: SYSTEM_PROMPT },
  { role: 'user', content: USER_PROMPT },
];
const anthropicMessages = [{ role: 'user', content: USER_PROMPT }];

/**
 * A conversation a client measures before sending it: the prompt above, an answer and a follow-up.
 * With the model and the system prompt, a body of about 2 KB.
 */
const countedMessages = [
  ...anthropicMessages,
  {
    role: 'assistant',
    content: [
      'Three recent novels fit: one follows a Dutch trading company clerk through ten years of letters,',
      'one is a slow voyage to Canton told by a ship surgeon, and one is the first of a trilogy about a',
      'Bristol merchant family. The second is a standalone; the third starts a series at its first volume.',
      'All three were published in the last eight years by small presses, run to more than five hundred',
      'pages, and are told at least in part through letters and journals. The clerk novel ends quietly,',
      'the voyage ends on a return home, and the trilogy resolves its first volume while leaving the',
      'family story open. Each costs between twenty-two and twenty-eight euros in hardcover.',
    ].join(' '),
  },
  {
    role: 'user',
    content: [
      'Thank you. Which of the three has the calmest ending, and is any of them available as a signed',
      'hardcover? If the trilogy is the best fit, please also tell me whether the second volume is out,',
      'and whether the first can be gift-wrapped in plain paper.',
    ].join(' '),
  },
];

const json = (value: unknown) => JSON.stringify(value);
const bearer = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
/**
 * What @anthropic-ai/sdk 1.x sends: a bearer key and a version header.
 * @see https://docs.anthropic.com/en/api/messages
 */
const anthropicHeaders = (key: string) => ({ ...bearer(key), 'anthropic-version': ANTHROPIC_VERSION });

function chatBody(model: string, stream: boolean) {
  return json({
    model,
    messages: chatMessages,
    max_tokens: MAX_TOKENS,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

/** A count_tokens body as `client.messages.countTokens()` sends it: the messages body without max_tokens. */
function countTokensBody(model: string) {
  return json({ model, system: SYSTEM_PROMPT, messages: countedMessages });
}

/**
 * A Responses body as `client.responses.create()` sends it: chat's prompt as `instructions` and a
 * string `input`, with chat's output limit, so that the gateway sends the upstream chat's request.
 */
function responsesBody(model: string) {
  return json({ model, instructions: SYSTEM_PROMPT, input: USER_PROMPT, max_output_tokens: MAX_TOKENS });
}

function messagesBody(model: string, stream: boolean) {
  return json({ model, max_tokens: MAX_TOKENS, system: SYSTEM_PROMPT, messages: anthropicMessages, ...(stream ? { stream: true } : {}) });
}

const chatRequest = (key: string, model: string, stream: boolean, pathPrefix = ''): RequestSpec => ({
  method: 'POST',
  path: `${pathPrefix}/v1/chat/completions`,
  headers: bearer(key),
  body: chatBody(model, stream),
});

const portkeyChat =
  (stream: boolean) =>
  (upstreamOrigin: string): RequestSpec => ({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { ...bearer(UPSTREAM_KEY), 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamOrigin}/v1` },
    body: chatBody(UPSTREAM_CHAT_MODEL, stream),
  });

export const WORKLOADS: readonly Workload[] = [
  {
    id: 'chat',
    title: 'chat completions, non-streaming, ~1 KB prompt',
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, false),
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.chat, false),
    probe: 'success',
    portkey: portkeyChat(false),
  },
  {
    id: 'chat-stream',
    title: 'chat completions, streaming (20 chunks)',
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, true),
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.chat, true),
    probe: 'success',
    portkey: portkeyChat(true),
  },
  {
    // The same answer, its 24 events a millisecond apart: each arrives in a read of its own and
    // leaves in a write of its own, as a provider's stream does, where chat-stream measures one
    // read and one write per stream. What a stream costs per read is the difference.
    id: 'chat-stream-paced',
    title: 'chat completions, streaming (20 chunks, one event a millisecond)',
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, true, '/hold/1'),
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.chatPaced, true),
    probe: 'success',
  },
  {
    id: 'models',
    title: 'GET /v1/models',
    upstream: { method: 'GET', path: '/v1/models', headers: { authorization: `Bearer ${UPSTREAM_KEY}` } },
    gateway: (key) => ({ method: 'GET', path: '/v1/models', headers: { authorization: `Bearer ${key}` } }),
    probe: 'success',
  },
  {
    id: 'count-tokens',
    title: 'POST /v1/messages/count_tokens, ~2 KB request (the gateway counts locally, no upstream call)',
    // The gateway calls no upstream here, so the bare proxy's figure is a baseline of the same kind
    // as for `models`: one hop to a fixed answer (docs/performance.md, "Workloads").
    upstream: { method: 'POST', path: '/v1/messages/count_tokens', headers: anthropicHeaders(UPSTREAM_KEY), body: countTokensBody(UPSTREAM_CLAUDE_MODEL) },
    gateway: (key) => ({ method: 'POST', path: '/v1/messages/count_tokens', headers: anthropicHeaders(key), body: countTokensBody(GATEWAY_MODELS.claude) }),
    probe: 'success',
  },
  {
    id: 'messages',
    title: 'POST /v1/messages, non-streaming, ~1 KB prompt, over an Anthropic-protocol upstream',
    upstream: { method: 'POST', path: '/v1/messages', headers: anthropicHeaders(UPSTREAM_KEY), body: messagesBody(UPSTREAM_CLAUDE_MODEL, false) },
    gateway: (key) => ({ method: 'POST', path: '/v1/messages', headers: anthropicHeaders(key), body: messagesBody(GATEWAY_MODELS.claude, false) }),
    probe: 'success',
  },
  {
    id: 'messages-stream',
    title: 'POST /v1/messages, streaming (20 text deltas), over an Anthropic-protocol upstream',
    upstream: { method: 'POST', path: '/v1/messages', headers: anthropicHeaders(UPSTREAM_KEY), body: messagesBody(UPSTREAM_CLAUDE_MODEL, true) },
    gateway: (key) => ({ method: 'POST', path: '/v1/messages', headers: anthropicHeaders(key), body: messagesBody(GATEWAY_MODELS.claude, true) }),
    probe: 'success',
  },
  {
    id: 'responses',
    title: 'POST /v1/responses, non-streaming, ~1 KB prompt, over the OpenAI-chat upstream of `chat`',
    // The gateway translates this to chat's upstream request: the baselines are chat's, and the
    // gateway's CPU per request is read against chat's of the same run (docs/performance.md).
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, false),
    gateway: (key) => ({ method: 'POST', path: '/v1/responses', headers: bearer(key), body: responsesBody(GATEWAY_MODELS.chat) }),
    probe: 'success',
  },
  {
    id: 'chat-anthropic',
    title: 'chat completions translated to an Anthropic-protocol upstream',
    upstream: { method: 'POST', path: '/v1/messages', headers: anthropicHeaders(UPSTREAM_KEY), body: messagesBody(UPSTREAM_CLAUDE_MODEL, false) },
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.claude, false),
    probe: 'success',
  },
  {
    id: 'images',
    title: 'image generation, b64_json, one PNG of 256x256 over an OpenAI Images upstream',
    // The upstream receives what the gateway sends it: the family's default quality, no response_format.
    upstream: {
      method: 'POST',
      path: '/v1/images/generations',
      headers: bearer(UPSTREAM_KEY),
      body: json({ model: UPSTREAM_IMAGE_MODEL, prompt: IMAGE_PROMPT, n: 1, size: '256x256', quality: 'medium' }),
    },
    gateway: (key) => ({
      method: 'POST',
      path: '/v1/images/generations',
      headers: bearer(key),
      body: json({ model: GATEWAY_MODELS.image, prompt: IMAGE_PROMPT, size: '256x256', response_format: 'b64_json' }),
    }),
    probe: 'success',
  },
  {
    id: 'embeddings',
    title: 'embeddings, a batch of 16 inputs, 256-dimension vectors over an OpenAI embeddings upstream',
    // The client sends what the openai SDK sends by default (base64); the gateway asks its upstream
    // for its default encoding (numbers) and encodes base64 itself.
    upstream: {
      method: 'POST',
      path: '/v1/embeddings',
      headers: bearer(UPSTREAM_KEY),
      body: json({ model: UPSTREAM_EMBEDDING_MODEL, input: EMBEDDING_INPUTS }),
    },
    gateway: (key) => ({
      method: 'POST',
      path: '/v1/embeddings',
      headers: bearer(key),
      body: json({ model: GATEWAY_MODELS.embed, input: EMBEDDING_INPUTS, encoding_format: 'base64' }),
    }),
    probe: 'success',
  },
  {
    id: 'chat-idempotent',
    title: 'chat completions replayed from an Idempotency-Key',
    upstream: withIdempotencyKey(chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, false)),
    gateway: (key) => withIdempotencyKey(chatRequest(key, GATEWAY_MODELS.chat, false)),
    probe: 'idempotent-replay',
  },
  {
    id: 'chat-limited',
    title: 'chat completions with a key that has every limit set (counters in Redis when it is up)',
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, false),
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.chat, false),
    probe: 'success',
    key: 'limited',
  },
];

function withIdempotencyKey(request: RequestSpec): RequestSpec {
  return { ...request, headers: { ...request.headers, 'idempotency-key': IDEMPOTENCY_KEY } };
}

/** A streaming chat whose upstream pace is set by the simulator path prefix (see bench/upstream.ts). */
export interface PacedStream {
  readonly upstream: RequestSpec;
  gateway(apiKey: string): RequestSpec;
}

/** The opening events up to the first text at once, the rest `gapMs` later: for time to first byte. */
export function firstByteStream(gapMs: number): PacedStream {
  return {
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, true, `/first/${gapMs}`),
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.chatFirst, true),
  };
}

/** One event every `holdMs`: for many streams open at once. */
export function heldStream(holdMs: number): PacedStream {
  return {
    upstream: chatRequest(UPSTREAM_KEY, UPSTREAM_CHAT_MODEL, true, `/hold/${holdMs}`),
    gateway: (key) => chatRequest(key, GATEWAY_MODELS.chatHold, true),
  };
}

/** The workload of an id given on a command line; an unknown id is an error that names it. */
export function workloadOf(id: string): Workload {
  const workload = WORKLOADS.find((candidate) => candidate.id === id);
  if (workload === undefined) throw new Error(`unknown workload ${id}`);
  return workload;
}
