/**
 * Canonical request → Chat Completions body (PROTOCOLS.md §1 and the §9 mapping tables). Pure: the
 * same request and endpoint always give the same bytes.
 */
import type { CanonicalRequest, ImagePart, Message, ResponseFormat, ToolChoice, UserContentPart } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { invalidRequest } from '../../core/errors.ts';
import { conversationParam } from '../param-names.ts';
import { reasoningEffort } from '../reasoning-effort.ts';
import type { UpstreamHttpRequest } from '../protocol.ts';
import type { ChatContentPart, ChatMessage, ChatRequestBody, ChatResponseFormat, ChatToolChoice } from './wire.ts';

/** Used when the provider config names no base_url. */
const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export function buildChatRequest(
  request: CanonicalRequest,
  endpoint: RouteEndpoint,
  apiKey: string | undefined,
  stream: boolean,
): UpstreamHttpRequest {
  const base = (endpoint.provider.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // Local compatible servers (vLLM, llama.cpp) often run without a key.
  if (apiKey !== undefined) headers.authorization = `Bearer ${apiKey}`;
  if (stream) headers.accept = 'text/event-stream';
  return { url: `${base}/chat/completions`, headers, body: JSON.stringify(chatBody(request, endpoint.upstreamModel, stream)) };
}

export function chatBody(request: CanonicalRequest, model: string, stream: boolean): ChatRequestBody {
  const body: ChatRequestBody = { model, messages: chatMessages(request) };
  if (request.maxOutputTokens !== undefined) body.max_completion_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop !== undefined) body.stop = [...request.stop];
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.seed !== undefined) body.seed = request.seed;
  if (request.logprobs !== undefined) body.logprobs = request.logprobs;
  if (request.topLogprobs !== undefined) body.top_logprobs = request.topLogprobs;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: {
        name: tool.name,
        ...(tool.description !== undefined && { description: tool.description }),
        ...(tool.parameters !== undefined && { parameters: tool.parameters }),
        ...(tool.strict !== undefined && { strict: tool.strict }),
      },
    }));
  }
  // Search-capable chat models take web search as a request option, not as a tool.
  if (request.webSearch === true) body.web_search_options = {};
  if (request.toolChoice !== undefined) body.tool_choice = chatToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.responseFormat !== undefined) body.response_format = chatResponseFormat(request.responseFormat);
  const effort = reasoningEffort(request);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (request.user !== undefined) body.user = request.user;
  if (stream) {
    body.stream = true;
    // Always asked for, whatever the client wants: billing needs the usage of every stream.
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** System blocks become leading system messages (the widest-supported role on compatible servers). */
function chatMessages(request: CanonicalRequest): ChatMessage[] {
  const messages: ChatMessage[] = request.system.map((block) => ({ role: 'system', content: block.text }));
  for (const message of request.messages) messages.push(...chatMessagesFor(message, request));
  return messages;
}

function chatMessagesFor(message: Message, request: CanonicalRequest): ChatMessage[] {
  switch (message.role) {
    case 'user':
      return userMessages(message.content, message.name, request);
    case 'assistant': {
      // Reasoning is not sent back: Chat Completions has no input field for it (§9.2), and
      // compatible servers that stream `reasoning_content` reject it in input.
      const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      const toolCalls = message.content.flatMap((part) =>
        part.type === 'tool_call'
          ? [{
              id: part.id,
              type: 'function' as const,
              function: { name: part.name, arguments: part.arguments },
              // Replayed verbatim (spec: chat completions rule 1).
              ...(part.extraContent !== undefined && { extra_content: part.extraContent }),
            }]
          : [],
      );
      return [{
        role: 'assistant',
        content: text === '' && toolCalls.length > 0 ? null : text,
        ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        ...(message.name !== undefined && { name: message.name }),
      }];
    }
    case 'tool':
      return message.content.map((part) => toolMessage(part, request));
    default: {
      const unknown: never = message;
      throw new Error(`unknown role ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * A canonical user turn may hold tool results (the messages dialect puts them there); Chat wants
 * them as `tool` messages, which must directly follow the assistant's calls, so they go first.
 */
function userMessages(content: readonly UserContentPart[], name: string | undefined, request: CanonicalRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'tool_result':
        messages.push(toolMessage(part, request));
        break;
      case 'text':
        parts.push({ type: 'text', text: part.text });
        break;
      case 'image':
        parts.push(imagePart(part));
        break;
      case 'document':
        // Plain-text documents are text; anything else travels as a file part (PDF input).
        parts.push(
          part.mediaType === 'text/plain'
            ? { type: 'text', text: part.data }
            : { type: 'file', file: { file_data: `data:${part.mediaType};base64,${part.data}`, ...(part.title !== undefined && { filename: part.title }) } },
        );
        break;
      default: {
        const unknown: never = part;
        throw new Error(`unknown user part ${JSON.stringify(unknown)}`);
      }
    }
  }
  if (parts.length > 0) {
    // A lone text part goes as a plain string, which every compatible server accepts.
    const only = parts.length === 1 ? parts[0] : undefined;
    messages.push({ role: 'user', content: only?.type === 'text' ? only.text : parts, ...(name !== undefined && { name }) });
  }
  return messages;
}

function toolMessage(part: Extract<UserContentPart, { type: 'tool_result' }>, request: CanonicalRequest): ChatMessage {
  const texts = part.content.map((item) => {
    if (item.type === 'image') {
      throw invalidRequest('Images inside tool results are not supported by this model.', conversationParam(request.dialect));
    }
    return item.text;
  });
  return { role: 'tool', tool_call_id: part.toolCallId, content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text' as const, text })) };
}

function imagePart(part: ImagePart): ChatContentPart {
  const url = part.source.kind === 'url' ? part.source.url : `data:${part.source.mediaType};base64,${part.source.data}`;
  return { type: 'image_url', image_url: { url, ...(part.detail !== undefined && { detail: part.detail }) } };
}

function chatToolChoice(choice: ToolChoice): ChatToolChoice {
  switch (choice.kind) {
    case 'auto':
    case 'none':
    case 'required':
      return choice.kind;
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    default: {
      const unknown: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(unknown)}`);
    }
  }
}

function chatResponseFormat(format: ResponseFormat): ChatResponseFormat {
  switch (format.kind) {
    case 'text':
    case 'json_object':
      return { type: format.kind };
    case 'json_schema':
      return {
        type: 'json_schema',
        json_schema: {
          name: format.name,
          schema: format.schema,
          ...(format.strict !== undefined && { strict: format.strict }),
          ...(format.description !== undefined && { description: format.description }),
        },
      };
    default: {
      const unknown: never = format;
      throw new Error(`unknown response format ${JSON.stringify(unknown)}`);
    }
  }
}
