/** A Responses `response` object → canonical result (PROTOCOLS.md §2). */
import type { AssistantContentPart, CanonicalResult, Citation } from '../../canonical/index.ts';
import { providerIdentity } from '../provider-identity.ts';
import { malformedUpstream } from '../transport/upstream-errors.ts';
import { responsesReportedError } from './errors.ts';
import { responsesFinish } from './finish.ts';
import { reasoningSignature } from './reasoning-item.ts';
import { responsesUsage } from './usage.ts';
import type { ResponsesAnnotationWire, ResponsesContentWire, ResponseObjectWire, ResponsesOutputItemWire } from './wire.ts';

export function parseResponsesResponse(body: unknown): CanonicalResult {
  const response = body as ResponseObjectWire;
  if (typeof response !== 'object' || response === null || !Array.isArray(response.output)) {
    throw malformedUpstream('a response object without output');
  }
  if (response.status === 'failed' || response.status === 'cancelled') throw responsesReportedError(response.error);
  const content: AssistantContentPart[] = [];
  const citations: Citation[] = [];
  for (const item of response.output) {
    const part = contentPart(item, citations);
    if (part !== undefined) content.push(part);
  }
  return {
    ...providerIdentity(response.id, response.model),
    content,
    finish: responsesFinish(response, {
      toolCalls: content.some((part) => part.type === 'tool_call'),
      refusal: response.output.some((item) => item.type === 'message' && (item.content ?? []).some((part) => part.type === 'refusal')),
    }),
    usage: responsesUsage(response.usage),
    ...(citations.length > 0 && { citations }),
  };
}

/** Built-in tool items (web_search_call…) carry no content of their own and are skipped. */
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
  const parts = (item.summary?.length ? item.summary : (item.content ?? [])) as ResponsesContentWire[];
  return parts.map((part) => ('text' in part ? (part.text ?? '') : '')).join('\n\n');
}

export function responsesCitations(annotations: readonly ResponsesAnnotationWire[] | undefined): Citation[] {
  return (annotations ?? []).flatMap((annotation) =>
    annotation.type === 'url_citation' && annotation.url !== undefined
      ? [{
          url: annotation.url,
          ...(annotation.title !== undefined && { title: annotation.title }),
          ...(annotation.start_index !== undefined && { startIndex: annotation.start_index }),
          ...(annotation.end_index !== undefined && { endIndex: annotation.end_index }),
        }]
      : [],
  );
}
