/**
 * Canonical request → Responses body (docs/protocols.md). Pure. Parameters
 * the format cannot carry are declared in index.ts (`unsupportedParameters`) so that policy rejects
 * them before any credit moves (docs/chat-completions.md, rule 3); none is dropped here.
 */
import type { AssistantContentPart, CanonicalRequest, ImagePart, Message, TextPart, ToolResultPart, UserContentPart } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { imageUrl, OPENAI_ADDRESS, openAIResponseFormat, openAIToolChoice, userTurnItems } from '../openai-request-fields.ts';
import { reasoningEffort } from '../reasoning-effort.ts';
import { upstreamRequestBuilder } from '../upstream-request.ts';
import { reasoningOfToolCall, reasoningReference } from './reasoning-item.ts';
import type { ResponsesInputContent, ResponsesInputItem, ResponsesRequestBody, ResponsesTool } from './wire.ts';

export const buildResponsesRequest = upstreamRequestBuilder({
  ...OPENAI_ADDRESS,
  path: () => '/responses',
  body: responsesBody,
});

export function responsesBody(request: CanonicalRequest, endpoint: RouteEndpoint, stream: boolean): ResponsesRequestBody {
  const body: ResponsesRequestBody = { model: endpoint.upstreamModel, input: request.messages.flatMap(inputItems) };
  if (request.system.length > 0) body.instructions = request.system.map((block) => block.text).join('\n\n');
  if (request.maxOutputTokens !== undefined) body.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  const tools = responsesTools(request);
  if (tools.length > 0) body.tools = tools;
  if (request.toolChoice !== undefined) body.tool_choice = openAIToolChoice(request.toolChoice, (name) => ({ type: 'function', name }));
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.responseFormat !== undefined || request.verbosity !== undefined) {
    body.text = {
      // Responses puts the schema's name and schema flat in `text.format` (Chat nests them).
      ...(request.responseFormat !== undefined && { format: openAIResponseFormat(request.responseFormat, (fields) => ({ type: 'json_schema', ...fields })) }),
      ...(request.verbosity !== undefined && { verbosity: request.verbosity }),
    };
  }
  const effort = reasoningEffort(request);
  if (effort !== undefined || request.reasoningSummary !== undefined) {
    body.reasoning = { ...(effort !== undefined && { effort }), ...(request.reasoningSummary !== undefined && { summary: request.reasoningSummary }) };
  }
  // The gateway keeps no conversation upstream (no previous_response_id), and a provider account
  // under zero data retention, or a route sending `store: false`, keeps no items either: a reasoning
  // item can then be replayed (reasoning-item.ts) only with its encrypted content. A reasoning model
  // reasons unless told not to, so its routes ask for that content even when the client gave no effort.
  if (effort !== 'none' && (effort !== undefined || endpoint.capabilities.reasoning === true)) body.include = ['reasoning.encrypted_content'];
  if (request.user !== undefined) body.user = request.user;
  if (stream) body.stream = true;
  return body;
}

function inputItems(message: Message): ResponsesInputItem[] {
  switch (message.role) {
    case 'user':
      return userItems(message.content);
    case 'assistant':
      return assistantItems(message.content);
    case 'tool':
      return message.content.map(toolOutput);
    default: {
      const unknown: never = message;
      throw new Error(`unknown role ${JSON.stringify(unknown)}`);
    }
  }
}

/** Tool results become `function_call_output` items, ahead of the turn's other content. */
function userItems(content: readonly UserContentPart[]): ResponsesInputItem[] {
  return userTurnItems<ResponsesInputItem, ResponsesInputContent>(content, {
    toolResult: toolOutput,
    text: (text) => ({ type: 'input_text', text }),
    image: inputImage,
    file: (file) => ({ type: 'input_file', ...file }),
    message: (parts) => ({ type: 'message', role: 'user', content: parts }),
  });
}

/**
 * Assistant output goes back as items in order: consecutive text as one assistant message, each tool
 * call as a `function_call`, OpenAI reasoning items by reference. Another family's reasoning has no
 * meaning here and is not sent. A turn without replayable reasoning parts (a chat client's)
 * gets the reasoning items its tool calls carry back, each right before its call.
 */
function assistantItems(content: readonly AssistantContentPart[]): ResponsesInputItem[] {
  const replayed = content.some((part) => part.type === 'reasoning' && reasoningReference(part.signature) !== undefined);
  const items: ResponsesInputItem[] = [];
  let texts: string[] = [];
  const flushText = () => {
    if (texts.length > 0) items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: texts.join(''), annotations: [] }] });
    texts = [];
  };
  for (const part of content) {
    switch (part.type) {
      case 'text':
        texts.push(part.text);
        break;
      case 'tool_call':
        flushText();
        if (!replayed) items.push(...reasoningOfToolCall(part.signature));
        items.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments });
        break;
      case 'reasoning': {
        const reference = reasoningReference(part.signature);
        if (reference === undefined) break;
        flushText();
        items.push({
          type: 'reasoning',
          id: reference.id,
          summary: part.text === '' ? [] : [{ type: 'summary_text', text: part.text }],
          ...(reference.encrypted_content !== undefined && { encrypted_content: reference.encrypted_content }),
        });
        break;
      }
      default: {
        const unknown: never = part;
        throw new Error(`unknown assistant part ${JSON.stringify(unknown)}`);
      }
    }
  }
  flushText();
  return items;
}

/** A text-only result is a plain string; images make it a list of input parts (both documented). */
function toolOutput(part: ToolResultPart): ResponsesInputItem {
  const onlyText = part.content.every((item): item is TextPart => item.type === 'text');
  const output = onlyText
    ? part.content.map((item) => (item as TextPart).text).join('')
    : part.content.map((item): ResponsesInputContent => (item.type === 'text' ? { type: 'input_text', text: item.text } : inputImage(item)));
  return { type: 'function_call_output', call_id: part.toolCallId, output };
}

function inputImage(part: ImagePart): ResponsesInputContent {
  return { type: 'input_image', image_url: imageUrl(part), detail: part.detail ?? 'auto' };
}

function responsesTools(request: CanonicalRequest): ResponsesTool[] {
  const tools: ResponsesTool[] = (request.tools ?? []).map((tool) => ({
    type: 'function',
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    parameters: tool.parameters ?? null,
    // Always explicit: this API treats an omitted `strict` as true, which the other formats do not.
    strict: tool.strict ?? false,
  }));
  if (request.webSearch === true) tools.push({ type: 'web_search' });
  return tools;
}
