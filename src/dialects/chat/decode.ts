/**
 * Chat completions body → CanonicalRequest. The schema has already checked every type and limit;
 * this adds the rules that span fields and records where each canonical piece came from, so that
 * policy errors name the client's own field (`messages[3].content[1]`, `tools[2].function.strict`).
 * Omission stays omission: an absent field is undefined in the canonical request.
 */
import type {
  AssistantContentPart,
  CanonicalRequest,
  FunctionTool,
  Message,
  ResponseFormat,
  SystemBlock,
  TextPart,
  ToolCallPart,
  UserContentPart,
  DocumentPart,
} from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { cacheOptions, fallbackModels, providerPreferences } from '../gateway-options.ts';
import { decodeToolChoice } from '../tool-choice.ts';
import { decodeImageUrl, parseDataUrl } from '../image-url.ts';
import type { ParamNamer } from '../../policy/violation.ts';
import { signatureOf } from './extra-content.ts';
import { chatParamNames } from './param-names.ts';
import { REFUSED_FIELDS, type ChatCompletionBody, type ChatMessageBody, type ChatToolCallBody } from './schema.ts';
import { checkServiceTier, refuseFields } from '../vendor-fields.ts';
import { measuredDocument } from '../pdf-document.ts';

export interface DecodedChatRequest {
  readonly request: CanonicalRequest;
  readonly names: ParamNamer;
}

export function decodeChatRequest(body: ChatCompletionBody): DecodedChatRequest {
  const conversation = decodeMessages(body.messages);
  const tools = decodeTools(body.tools);
  const maxTokensField = body.max_tokens !== undefined || body.max_completion_tokens === undefined ? 'max_tokens' : 'max_completion_tokens';
  checkStreamOptions(body);
  refuseFields(body, REFUSED_FIELDS);
  checkServiceTier(body.service_tier, ['auto', 'default']);
  if (body.top_logprobs !== undefined && body.logprobs !== true) {
    throw errors.invalidValue('top_logprobs', "'top_logprobs' requires 'logprobs' to be true.");
  }
  const request: CanonicalRequest = {
    dialect: 'chat',
    model: body.model,
    fallbackModels: fallbackModels(body),
    system: conversation.system,
    messages: conversation.messages,
    maxOutputTokens: body.max_tokens ?? body.max_completion_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stop: body.stop === undefined ? undefined : typeof body.stop === 'string' ? [body.stop] : body.stop,
    presencePenalty: body.presence_penalty,
    frequencyPenalty: body.frequency_penalty,
    seed: body.seed,
    logprobs: body.logprobs,
    topLogprobs: body.top_logprobs,
    tools: tools.functions.length ? tools.functions : undefined,
    webSearch: tools.webSearchIndex === undefined ? undefined : true,
    toolChoice: decodeToolChoice(
      typeof body.tool_choice === 'object' ? { name: body.tool_choice.function.name, param: 'tool_choice.function.name' } : body.tool_choice,
      tools.functions,
    ),
    parallelToolCalls: body.parallel_tool_calls,
    responseFormat: decodeResponseFormat(body.response_format),
    reasoning: body.reasoning_effort === undefined ? undefined : { kind: 'effort', effort: body.reasoning_effort },
    verbosity: body.verbosity ?? undefined,
    metadata: body.metadata ?? undefined,
    store: body.store ?? undefined,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage,
    user: body.user,
    cache: cacheOptions(body),
    provider: providerPreferences(body),
    extraBody: body.extra_body && Object.keys(body.extra_body).length ? body.extra_body : undefined,
  };
  const names = chatParamNames({
    messages: conversation.origins,
    tools: tools.origins,
    webSearchTool: tools.webSearchIndex,
    maxTokensField,
  });
  return { request, names };
}

function checkStreamOptions(body: ChatCompletionBody): void {
  if (body.stream_options !== undefined && body.stream !== true) {
    throw errors.invalidValue('stream_options', "'stream_options' is only allowed when 'stream' is true.");
  }
}

interface DecodedConversation {
  readonly system: SystemBlock[];
  readonly messages: Message[];
  readonly origins: number[];
}

function decodeMessages(wire: readonly ChatMessageBody[]): DecodedConversation {
  const system: SystemBlock[] = [];
  const messages: Message[] = [];
  const origins: number[] = [];
  // Tool results in chat carry only the call id; providers that key results by function name need it.
  const toolNames = new Map<string, string>();
  wire.forEach((message, index) => {
    const at = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        for (const text of textsOf(message.content)) system.push({ text });
        return;
      case 'user':
        messages.push({ role: 'user', content: decodeUserContent(message.content, at), ...(message.name === undefined ? {} : { name: message.name }) });
        origins.push(index);
        return;
      case 'assistant': {
        const content = decodeAssistantContent(message, at);
        for (const part of content) if (part.type === 'tool_call') toolNames.set(part.id, part.name);
        messages.push({ role: 'assistant', content, ...(message.name === undefined ? {} : { name: message.name }) });
        origins.push(index);
        return;
      }
      case 'tool': {
        const name = toolNames.get(message.tool_call_id) ?? message.name;
        messages.push({
          role: 'tool',
          content: [
            {
              type: 'tool_result',
              toolCallId: message.tool_call_id,
              ...(name === undefined ? {} : { name }),
              content: textsOf(message.content).map((text): TextPart => ({ type: 'text', text })),
            },
          ],
        });
        origins.push(index);
        return;
      }
      default: {
        const unreachable: never = message;
        return unreachable;
      }
    }
  });
  return { system, messages, origins };
}

function textsOf(content: string | readonly { readonly text: string }[]): string[] {
  return typeof content === 'string' ? [content] : content.map((part) => part.text);
}

type UserWireContent = Extract<ChatMessageBody, { role: 'user' }>['content'];

function decodeUserContent(content: UserWireContent, at: string): UserContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, partIndex): UserContentPart => {
    switch (part.type) {
      case 'text':
        return { type: 'text', text: part.text };
      case 'image_url':
        return decodeImageUrl(part.image_url, `${at}.content[${partIndex}].image_url.url`);
      case 'file':
        return decodeFile(part.file, `${at}.content[${partIndex}].file.file_data`);
      default: {
        const unreachable: never = part;
        return unreachable;
      }
    }
  });
}

function decodeFile(file: { file_data: string; filename?: string }, param: string): DocumentPart {
  const data = parseDataUrl(file.file_data);
  if (!data) throw errors.invalidValue(param, `'${param}' must be a data URL (data:<media type>;base64,<data>).`);
  const title = file.filename === undefined ? {} : { title: file.filename };
  // The canonical document holds plain text for text/plain and base64 for everything else.
  const content = data.mediaType === 'text/plain' ? Buffer.from(data.data, 'base64').toString('utf8') : data.data;
  return measuredDocument({ type: 'document', mediaType: data.mediaType, data: content, ...title }, param);
}

type AssistantWire = Extract<ChatMessageBody, { role: 'assistant' }>;

function decodeAssistantContent(message: AssistantWire, at: string): AssistantContentPart[] {
  const content: AssistantContentPart[] = [];
  // Reasoning text the gateway returned earlier comes back first, as it was produced.
  if (message.reasoning_content) content.push({ type: 'reasoning', text: message.reasoning_content });
  const hasToolCalls = (message.tool_calls?.length ?? 0) > 0;
  if (typeof message.content === 'string') {
    // An empty string beside tool calls is "no text" (several providers reject empty text blocks).
    if (message.content !== '' || !hasToolCalls) content.push({ type: 'text', text: message.content });
  } else if (message.content !== null) {
    for (const part of message.content) content.push({ type: 'text', text: part.type === 'text' ? part.text : part.refusal });
  } else if (message.refusal) {
    content.push({ type: 'text', text: message.refusal });
  }
  for (const call of message.tool_calls ?? []) content.push(decodeToolCall(call));
  if (content.length === 0) {
    throw errors.invalidValue(`${at}.content`, `'${at}.content' must be set unless the assistant message has tool_calls.`);
  }
  return content;
}

/**
 * A replayed tool call keeps its `extra_content` verbatim (docs/chat-completions.md, rule 1). A
 * provider signature inside it (a Gemini thought signature) is also lifted into the canonical
 * signature, where the protocol of that provider family looks for it.
 */
function decodeToolCall(call: ChatToolCallBody): ToolCallPart {
  const extra = call.extra_content;
  const signature = signatureOf(extra);
  return {
    type: 'tool_call',
    id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
    ...(signature === undefined ? {} : { signature }),
    ...(extra === undefined ? {} : { extraContent: extra }),
  };
}

interface DecodedTools {
  readonly functions: FunctionTool[];
  readonly origins: number[];
  readonly webSearchIndex: number | undefined;
}

function decodeTools(wire: ChatCompletionBody['tools']): DecodedTools {
  const functions: FunctionTool[] = [];
  const origins: number[] = [];
  let webSearchIndex: number | undefined;
  (wire ?? []).forEach((tool, index) => {
    if (tool.type === 'web_search') {
      if (webSearchIndex !== undefined) throw errors.invalidValue(`tools[${index}]`, `Only one web_search tool is allowed; 'tools[${index}]' repeats it.`);
      webSearchIndex = index;
      return;
    }
    const fn = tool.function;
    functions.push({
      name: fn.name,
      ...(fn.description === undefined ? {} : { description: fn.description }),
      ...(fn.parameters === undefined ? {} : { parameters: fn.parameters }),
      ...(fn.strict === undefined || fn.strict === null ? {} : { strict: fn.strict }),
    });
    origins.push(index);
  });
  return { functions, origins, webSearchIndex };
}

function decodeResponseFormat(format: ChatCompletionBody['response_format']): ResponseFormat | undefined {
  if (format === undefined) return undefined;
  switch (format.type) {
    case 'text':
      return { kind: 'text' };
    case 'json_object':
      return { kind: 'json_object' };
    case 'json_schema': {
      const spec = format.json_schema;
      return {
        kind: 'json_schema',
        name: spec.name,
        schema: spec.schema,
        ...(spec.strict === undefined || spec.strict === null ? {} : { strict: spec.strict }),
        ...(spec.description === undefined ? {} : { description: spec.description }),
      };
    }
    default: {
      const unreachable: never = format;
      return unreachable;
    }
  }
}
