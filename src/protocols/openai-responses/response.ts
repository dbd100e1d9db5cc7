/**
 * A Responses `response` object → canonical result. Web search calls become the
 * result's web-search info (web-search.ts); the reasoning items before a function call also ride
 * on that call (reasoning-item.ts).
 * @see https://platform.openai.com/docs/api-reference/responses
 */
import type { AssistantContentPart, CanonicalResult, Citation } from '../../canonical/index.ts';
import { providerIdentity } from '../provider-identity.ts';
import { errors } from '../../core/errors.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { responsesFailedError } from './errors.ts';
import { responsesFinish } from './finish.ts';
import { reasoningCarrier, reasoningSignature } from './reasoning-item.ts';
import { responsesUsage } from './usage.ts';
import { responsesWebSearch } from './web-search.ts';
import { ResponseObjectSchema, type ResponsesAnnotationWire, type ResponsesContentWire, type ResponsesOutputItemWire } from './wire.ts';

const checkResponse = wireCheck(ResponseObjectSchema, 'a response object');

export function parseResponsesResponse(body: unknown): CanonicalResult {
  const response = checkedBody(checkResponse, body);
  if (!Array.isArray(response.output)) {
    throw errors.malformedUpstream('a response object without output');
  }
  if (response.status === 'failed' || response.status === 'cancelled') throw responsesFailedError(response.error);
  const content: AssistantContentPart[] = [];
  const citations: Citation[] = [];
  const carrier = reasoningCarrier();
  for (const item of response.output) {
    const part = contentPart(item, citations);
    if (item.type === 'reasoning') carrier.reasoningDone(item);
    if (part?.type === 'tool_call') {
      const signature = carrier.toolCallSignature();
      content.push(signature === undefined ? part : { ...part, signature });
    } else if (part !== undefined) {
      content.push(part);
    }
  }
  const webSearch = responsesWebSearch(response.output);
  return {
    ...providerIdentity(response.id, response.model),
    content,
    finish: responsesFinish(response, {
      toolCalls: content.some((part) => part.type === 'tool_call'),
      refusal: response.output.some((item) => item.type === 'message' && (item.content ?? []).some((part) => part.type === 'refusal')),
    }),
    usage: responsesUsage(response.usage),
    ...(response.usage != null && { providerUsage: response.usage }),
    ...(webSearch !== undefined && { webSearch }),
    ...(citations.length > 0 && { citations }),
  };
}

/** Built-in tool items (web_search_call…) carry no content of their own. */
function contentPart(item: ResponsesOutputItemWire, citations: Citation[]): AssistantContentPart | undefined {
  switch (item.type) {
    case 'message': {
      const text = (item.content ?? []).map((part) => partText(part, citations)).join('');
      return { type: 'text', text };
    }
    case 'function_call':
      return { type: 'tool_call', id: item.call_id ?? item.id ?? '', name: item.name ?? '', arguments: item.arguments ?? '' };
    case 'reasoning': {
      const signature = reasoningSignature(item.id, item.encrypted_content);
      return { type: 'reasoning', text: reasoningText(item), ...(signature !== undefined && { signature }) };
    }
    default:
      return undefined;
  }
}

function partText(part: ResponsesContentWire, citations: Citation[]): string {
  switch (part.type) {
    case 'output_text':
      citations.push(...responsesCitations(part.annotations));
      return part.text ?? '';
    case 'refusal':
      return part.refusal ?? '';
    default:
      return '';
  }
}

/** Summaries when asked for, raw reasoning text from servers that expose it; parts joined by a blank line. */
export function reasoningText(item: ResponsesOutputItemWire): string {
  const parts: readonly ResponsesContentWire[] = item.summary?.length ? item.summary : (item.content ?? []);
  return parts.map((part) => part.text ?? '').join('\n\n');
}

export function responsesCitations(annotations: readonly ResponsesAnnotationWire[] | null | undefined): Citation[] {
  return (annotations ?? []).flatMap((annotation) =>
    annotation.type === 'url_citation' && annotation.url != null
      ? [
          {
            url: annotation.url,
            ...(annotation.title != null && { title: annotation.title }),
            ...(annotation.start_index != null && { startIndex: annotation.start_index }),
            ...(annotation.end_index != null && { endIndex: annotation.end_index }),
          },
        ]
      : [],
  );
}
