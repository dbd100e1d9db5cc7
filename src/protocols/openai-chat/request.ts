/**
 * Canonical request → Chat Completions body (docs/protocols.md). Pure: the
 * same request and endpoint always give the same bytes.
 */
import type { CanonicalRequest, ImagePart, Message, UserContentPart } from '../../canonical/index.ts';
import { imageUrl, OPENAI_ADDRESS, openAIResponseFormat, openAIToolChoice, userTurnItems } from '../openai-request-fields.ts';
import { rejectParameter } from '../../policy/violation.ts';
import { reasoningEffort } from '../reasoning-effort.ts';
import { upstreamRequestBuilder } from '../upstream-request.ts';
import type { ChatContentPart, ChatMessage, ChatRequestBody } from './wire.ts';

export const buildChatRequest = upstreamRequestBuilder({
  ...OPENAI_ADDRESS,
  path: () => '/chat/completions',
  body: (request, endpoint, stream) => chatBody(request, endpoint.upstreamModel, stream),
});

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
  if (request.toolChoice !== undefined) body.tool_choice = openAIToolChoice(request.toolChoice, (name) => ({ type: 'function', function: { name } }));
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  if (request.responseFormat !== undefined) {
    body.response_format = openAIResponseFormat(request.responseFormat, (fields) => ({ type: 'json_schema', json_schema: fields }));
  }
  const effort = reasoningEffort(request);
  if (effort !== undefined) body.reasoning_effort = effort;
  if (request.verbosity !== undefined) body.verbosity = request.verbosity;
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
  for (const message of request.messages) messages.push(...chatMessagesFor(message));
  return messages;
}

function chatMessagesFor(message: Message): ChatMessage[] {
  switch (message.role) {
    case 'user':
      return userMessages(message.content, message.name);
    case 'assistant': {
      // Reasoning is not sent back: Chat Completions has no input field for it, and
      // compatible servers that stream `reasoning_content` reject it in input.
      const text = message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      const toolCalls = message.content.flatMap((part) =>
        part.type === 'tool_call'
          ? [
              {
                id: part.id,
                type: 'function' as const,
                function: { name: part.name, arguments: part.arguments },
                // Replayed verbatim (docs/chat-completions.md, rule 1).
                ...(part.extraContent !== undefined && { extra_content: part.extraContent }),
              },
            ]
          : [],
      );
      return [
        {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
          ...(message.name !== undefined && { name: message.name }),
        },
      ];
    }
    case 'tool':
      return message.content.map((part) => toolMessage(part));
    default: {
      const unknown: never = message;
      throw new Error(`unknown role ${JSON.stringify(unknown)}`);
    }
  }
}

function userMessages(content: readonly UserContentPart[], name: string | undefined): ChatMessage[] {
  return userTurnItems<ChatMessage, ChatContentPart>(content, {
    toolResult: (part) => toolMessage(part),
    text: (text) => ({ type: 'text', text }),
    image: imagePart,
    file: (file) => ({ type: 'file', file }),
    message: (parts) => {
      // A lone text part goes as a plain string, which every compatible server accepts.
      const only = parts.length === 1 ? parts[0] : undefined;
      return { role: 'user', content: only?.type === 'text' ? only.text : parts, ...(name !== undefined && { name }) };
    },
  });
}

function toolMessage(part: Extract<UserContentPart, { type: 'tool_result' }>): ChatMessage {
  const texts = part.content.map((item) => {
    if (item.type === 'image') {
      throw rejectParameter('messages', 'Images inside tool results are not supported by this model.', 'invalid_value');
    }
    return item.text;
  });
  return { role: 'tool', tool_call_id: part.toolCallId, content: texts.length === 1 ? texts[0] : texts.map((text) => ({ type: 'text' as const, text })) };
}

function imagePart(part: ImagePart): ChatContentPart {
  return { type: 'image_url', image_url: { url: imageUrl(part), ...(part.detail !== undefined && { detail: part.detail }) } };
}
