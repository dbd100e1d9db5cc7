/**
 * Canonical stream events → `chat.completion.chunk` server-sent events, following what the openai
 * SDK's stream helpers enforce (docs/chat-completions.md): the role chunk first; each tool call
 * with a stable index, its id and name on its first delta only; one chunk with `finish_reason`;
 * then, with `stream_options.include_usage`, a `choices: []` chunk whose usage carries the charged
 * `cost`; then `data: [DONE]`. An error after the stream started is one `data: {"error":…}` event
 * and the stream ends there.
 */
import type { ContentLogprob, StreamEvent, WebSearchInfo } from '../../canonical/index.ts';
import { formatUsd } from '../../core/money.ts';
import type { StreamRun } from '../../pipeline/text-stream.ts';
import { completionId, encodeCitation, encodeFinishReason, encodeLogprobs, encodeUsage, encodeWebSearch, type ChatUsage } from './encode.ts';
import { extraContentOf } from './extra-content.ts';

type Delta = Record<string, unknown>;

/**
 * The frames of each canonical event, in order: a function of one event (with the stream's state
 * in its closure) rather than a generator, so that the body sending the stream pulls events and
 * frames them in one step per event (pipeline/http.ts).
 */
export function chatFrameEncoder(run: StreamRun, includeUsage: boolean): (event: StreamEvent) => string {
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
  const role = (): string => {
    if (roleSent) return '';
    roleSent = true;
    return chunk({ role: 'assistant', content: '' });
  };

  return (event) => {
    switch (event.type) {
      case 'start':
        return role();
      case 'text-delta':
        if (event.logprobs?.length) return role() + logprobsChunk({ content: event.text }, event.logprobs);
        return event.text ? role() + chunk({ content: event.text }) : role();
      case 'text-end':
        return event.citations?.length ? role() + chunk({ annotations: event.citations.map(encodeCitation) }) : '';
      case 'reasoning-delta':
        return event.text ? role() + chunk({ reasoning_content: event.text }) : role();
      case 'tool-call-start': {
        const index = toolIndexes.size;
        toolIndexes.set(event.index, index);
        const extra = extraContentOf(event.extraContent, event.signature);
        return (
          role() +
          chunk({
            tool_calls: [{ index, id: event.id, type: 'function', function: { name: event.name, arguments: '' }, ...(extra ? { extra_content: extra } : {}) }],
          })
        );
      }
      case 'tool-call-delta': {
        const index = toolIndexes.get(event.index);
        return index !== undefined && event.argumentsDelta ? chunk({ tool_calls: [{ index, function: { arguments: event.argumentsDelta } }] }) : '';
      }
      case 'finish': {
        // The pipeline settles before it hands out the terminal event, so the cost is known here.
        const settlement = run.settlement;
        const webSearch = settlement ? encodeWebSearch(call, webSearchInfo, settlement) : undefined;
        let frames = role() + lastChunk(encodeFinishReason(event.finish.reason), webSearch ? { x_gateway: { web_search: webSearch } } : {});
        if (includeUsage && settlement) {
          const usage: ChatUsage & { cost: string } = { ...encodeUsage(settlement.usage), cost: formatUsd(settlement.charged) };
          frames += frame({ ...base, choices: [], usage });
        }
        return `${frames}data: [DONE]\n\n`;
      }
      case 'error':
        return frame(event.error.toEnvelope());
      case 'web-search':
        webSearchInfo = event.webSearch;
        return '';
      case 'text-start':
      case 'reasoning-start':
      case 'reasoning-end':
      case 'tool-call-end':
      case 'usage':
        // Nothing on the chat wire: parts have no explicit boundaries, and usage comes at the end.
        return '';
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  };
}

function frame(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
