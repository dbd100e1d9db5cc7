/**
 * Canonical stream events → `chat.completion.chunk` server-sent events, following what the openai
 * SDK's stream helpers enforce (PROTOCOLS.md §1 and §9.8): the role chunk first; each tool call
 * with a stable index, its id and name on its first delta only; one chunk with `finish_reason`;
 * then, with `stream_options.include_usage`, a `choices: []` chunk whose usage carries the charged
 * `cost`; then `data: [DONE]`. An error after the stream started is one `data: {"error":…}` event
 * and the stream ends there.
 */
import type { ContentLogprob, WebSearchInfo } from '../../canonical/index.ts';
import { formatUsd } from '../../core/money.ts';
import type { StreamRun } from '../../pipeline/types.ts';
import { completionId, encodeCitation, encodeFinishReason, encodeLogprobs, encodeUsage, encodeWebSearch, type ChatUsage } from './encode.ts';
import { extraContentOf } from './extra-content.ts';

type Delta = Record<string, unknown>;

export async function* chatEventStream(run: StreamRun, includeUsage: boolean): AsyncGenerator<string> {
  const { call } = run;
  const base = { id: completionId(call.requestId), object: 'chat.completion.chunk', created: Math.floor(call.createdAt / 1000), model: call.modelId };
  const usageField = includeUsage ? { usage: null } : {};
  // Every chunk before the last differs from the others only in its delta, so the rest of it is
  // serialized once per stream (the same JSON as the object form below, key order included).
  const deltaHead = `data: ${JSON.stringify(base).slice(0, -1)},"choices":[{"index":0,"delta":`;
  const deltaTail = `,"logprobs":null,"finish_reason":null}]${includeUsage ? ',"usage":null' : ''}}\n\n`;
  const chunk = (delta: Delta): string => deltaHead + JSON.stringify(delta) + deltaTail;
  // Logprobs are asked for rarely, so a chunk that carries them is serialized whole.
  const logprobsChunk = (delta: Delta, logprobs: readonly ContentLogprob[]): string =>
    frame({ ...base, choices: [{ index: 0, delta, logprobs: encodeLogprobs(logprobs), finish_reason: null }], ...usageField });
  const lastChunk = (finishReason: string | null, extra: Record<string, unknown>): string =>
    frame({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }], ...usageField, ...extra });
  /** Canonical part index → the chat tool call index (0, 1, … in order of appearance). */
  const toolIndexes = new Map<number, number>();
  let roleSent = false;
  let webSearchInfo: WebSearchInfo | undefined;
  const role = function* (): Generator<string> {
    if (!roleSent) {
      roleSent = true;
      yield chunk({ role: 'assistant', content: '' });
    }
  };

  for await (const event of run.events) {
    switch (event.type) {
      case 'start':
        yield* role();
        break;
      case 'text-delta':
        yield* role();
        if (event.logprobs?.length) yield logprobsChunk({ content: event.text }, event.logprobs);
        else if (event.text) yield chunk({ content: event.text });
        break;
      case 'text-end':
        if (event.citations?.length) {
          yield* role();
          yield chunk({ annotations: event.citations.map(encodeCitation) });
        }
        break;
      case 'reasoning-delta':
        yield* role();
        if (event.text) yield chunk({ reasoning_content: event.text });
        break;
      case 'tool-call-start': {
        yield* role();
        const index = toolIndexes.size;
        toolIndexes.set(event.index, index);
        const extra = extraContentOf(event.extraContent, event.signature);
        yield chunk({
          tool_calls: [{ index, id: event.id, type: 'function', function: { name: event.name, arguments: '' }, ...(extra ? { extra_content: extra } : {}) }],
        });
        break;
      }
      case 'tool-call-delta': {
        const index = toolIndexes.get(event.index);
        if (index !== undefined && event.argumentsDelta) yield chunk({ tool_calls: [{ index, function: { arguments: event.argumentsDelta } }] });
        break;
      }
      case 'finish': {
        yield* role();
        const settlement = run.settlement;
        const webSearch = settlement ? encodeWebSearch(call, webSearchInfo, settlement) : undefined;
        yield lastChunk(encodeFinishReason(event.finish.reason), webSearch ? { x_gateway: { web_search: webSearch } } : {});
        if (includeUsage && settlement) {
          const usage: ChatUsage & { cost: string } = { ...encodeUsage(settlement.usage), cost: formatUsd(settlement.charged) };
          yield frame({ ...base, choices: [], usage });
        }
        yield 'data: [DONE]\n\n';
        return;
      }
      case 'error':
        yield frame(event.error.toEnvelope());
        return;
      case 'web-search':
        webSearchInfo = event.webSearch;
        break;
      case 'text-start':
      case 'reasoning-start':
      case 'reasoning-end':
      case 'tool-call-end':
      case 'usage':
        // Nothing on the chat wire: parts have no explicit boundaries, and usage comes at the end.
        break;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }
}

function frame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
