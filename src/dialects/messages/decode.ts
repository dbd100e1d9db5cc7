/**
 * Messages body → CanonicalRequest (`dialect: 'messages'`). The schema has already checked every
 * type and limit; this adds the rules that span fields (docs/messages.md, "Rules") and keeps the
 * body's shape: one canonical message per message, one part per block, each `cache_control` on
 * the part it was attached to (rule 1), thinking signatures as Anthropic-family opaque data that
 * goes back unchanged to the same family. Omission stays omission.
 */
import type {
  AssistantContentPart,
  CacheControl,
  CanonicalRequest,
  DocumentPart,
  FunctionTool,
  ImagePart,
  Message,
  ReasoningRequest,
  SystemBlock,
  TextPart,
  ToolChoice,
  UserContentPart,
} from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import type { ParamNamer } from '../../policy/violation.ts';
import { cacheOptions, fallbackModels, providerPreferences } from '../gateway-options.ts';
import { messagesParamNames } from './param-names.ts';
import { signatureOf, toolCallDataOf, type ToolCallData } from './opaque-data.ts';
import { REFUSED_FIELDS, type CountTokensBody, type CustomToolBody, type MessageBody, type ServerToolBody } from './schema.ts';
import { checkServiceTier, refuseFields } from '../vendor-fields.ts';
import { measuredDocument } from '../pdf-document.ts';

export interface DecodedMessagesRequest {
  readonly request: CanonicalRequest;
  readonly names: ParamNamer;
}

/**
 * `body` is either endpoint's (count_tokens leaves `max_tokens` out); `betas` are the values of
 * the `anthropic-beta` header.
 */
export function decodeMessagesRequest(body: CountTokensBody, betas?: readonly string[]): DecodedMessagesRequest {
  refuseFields(body, REFUSED_FIELDS);
  checkServiceTier(body.service_tier, ['auto', 'standard_only']);
  const tools = decodeTools(body.tools);
  const format = body.output_config?.format ?? undefined;
  const reasoning = decodeThinking(body.thinking, body.max_tokens);
  const choice = body.tool_choice;
  const request: CanonicalRequest = {
    dialect: 'messages',
    model: body.model,
    fallbackModels: fallbackModels(body),
    system: decodeSystem(body.system),
    messages: decodeMessages(body.messages),
    maxOutputTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    topK: body.top_k,
    stop: body.stop_sequences,
    tools,
    toolChoice: decodeToolChoice(choice, tools),
    // `disable_parallel_tool_use: false` is an explicit "parallel calls allowed", not an omission.
    parallelToolCalls: choice?.type === 'none' || choice?.disable_parallel_tool_use === undefined ? undefined : !choice.disable_parallel_tool_use,
    reasoning,
    outputEffort: body.output_config?.effort ?? undefined,
    // Structured output: the canonical format's name is required by the OpenAI formats, which Anthropic's lacks.
    responseFormat: format === undefined ? undefined : { kind: 'json_schema', name: 'output', schema: format.schema },
    stream: body.stream === true,
    user: body.metadata?.user_id ?? undefined,
    cache: cacheOptions(body),
    provider: providerPreferences(body),
    ...(betas !== undefined && betas.length > 0 && { betas }),
  };
  return { request, names: messagesParamNames };
}

/** The values of `anthropic-beta` headers: comma-separated, possibly repeated. */
export function betasOf(header: string | readonly string[] | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const values = (typeof header === 'string' ? [header] : header).flatMap((value) => value.split(','));
  const betas = values.map((value) => value.trim()).filter((value) => value.length > 0);
  return betas.length > 0 ? betas : undefined;
}

function cacheControlOf(wire: { type: 'ephemeral'; ttl?: '5m' | '1h' } | null | undefined): { cacheControl: CacheControl } | undefined {
  if (wire === undefined || wire === null) return undefined;
  return { cacheControl: wire.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: wire.ttl } };
}

type TextBlockBody = Extract<Exclude<NonNullable<CountTokensBody['system']>, string>[number], { type: 'text' }>;

function decodeSystem(system: CountTokensBody['system']): SystemBlock[] {
  if (system === undefined) return [];
  // An empty system string is no system prompt (upstreams refuse empty text blocks).
  if (typeof system === 'string') return system === '' ? [] : [{ text: system }];
  return system.map((block) => ({ text: block.text, ...cacheControlOf(block.cache_control) }));
}

function textPart(block: TextBlockBody): TextPart {
  return { type: 'text', text: block.text, ...cacheControlOf(block.cache_control) };
}

function decodeMessages(wire: readonly MessageBody[]): Message[] {
  // Tool results carry only the call's id; providers that key results by function name need it.
  const toolNames = new Map<string, string>();
  return wire.map((message, messageIndex): Message => {
    if (message.role === 'assistant') {
      const content = decodeAssistantContent(message.content);
      for (const part of content) if (part.type === 'tool_call') toolNames.set(part.id, part.name);
      return { role: 'assistant', content };
    }
    return { role: 'user', content: decodeUserContent(message.content, toolNames, `messages[${messageIndex}].content`) };
  });
}

type UserContentBody = Extract<MessageBody, { role: 'user' }>['content'];
type AssistantContentBody = Extract<MessageBody, { role: 'assistant' }>['content'];
type ImageBlockBody = Extract<Exclude<UserContentBody, string>[number], { type: 'image' }>;

function decodeUserContent(content: UserContentBody, toolNames: ReadonlyMap<string, string>, at: string): UserContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((block, blockIndex): UserContentPart => {
    switch (block.type) {
      case 'text':
        return textPart(block);
      case 'image':
        return imagePart(block);
      case 'document': {
        const source = block.source;
        const document: DocumentPart = {
          type: 'document',
          // The canonical document holds plain text for text/plain and base64 for everything else.
          mediaType: source.media_type,
          data: source.data,
          ...(typeof block.title === 'string' && { title: block.title }),
          ...cacheControlOf(block.cache_control),
        };
        return measuredDocument(document, `${at}[${blockIndex}].source.data`);
      }
      case 'tool_result': {
        const name = toolNames.get(block.tool_use_id);
        const inner = block.content;
        return {
          type: 'tool_result',
          toolCallId: block.tool_use_id,
          ...(name !== undefined && { name }),
          content:
            inner === undefined
              ? []
              : typeof inner === 'string'
                ? [{ type: 'text', text: inner }]
                : inner.map((part) => (part.type === 'text' ? textPart(part) : imagePart(part))),
          ...(block.is_error !== undefined && { isError: block.is_error }),
          ...cacheControlOf(block.cache_control),
        };
      }
      default: {
        const unreachable: never = block;
        return unreachable;
      }
    }
  });
}

function imagePart(block: ImageBlockBody): ImagePart {
  const source = block.source;
  return {
    type: 'image',
    source: source.type === 'url' ? { kind: 'url', url: source.url } : { kind: 'base64', mediaType: source.media_type, data: source.data },
    ...cacheControlOf(block.cache_control),
  };
}

function decodeAssistantContent(content: AssistantContentBody): AssistantContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  // Tool call data the gateway sent in redacted_thinking blocks goes back onto its calls (opaque-data.ts).
  const carried = new Map<string, ToolCallData>();
  const parts: AssistantContentPart[] = [];
  for (const block of content) {
    switch (block.type) {
      case 'text':
        parts.push(textPart(block));
        break;
      case 'tool_use': {
        // The arguments stay JSON text in canonical form; an object serializes to exactly one.
        const data = carried.get(block.id);
        parts.push({
          type: 'tool_call',
          id: block.id,
          name: block.name,
          arguments: JSON.stringify(block.input),
          ...(data?.signature && { signature: data.signature }),
          ...(data?.extraContent && { extraContent: data.extraContent }),
        });
        break;
      }
      case 'thinking': {
        const signature = signatureOf(block.signature);
        parts.push({ type: 'reasoning', text: block.thinking, ...(signature && { signature }) });
        break;
      }
      case 'redacted_thinking': {
        const data = toolCallDataOf(block.data);
        if (data === undefined) {
          // Redacted thinking, not a carrier; a carrier that does not read back carries nothing.
          const signature = signatureOf(block.data);
          parts.push({ type: 'reasoning', text: '', redacted: true, ...(signature && { signature }) });
        } else if (data !== null) {
          carried.set(data.id, data);
        }
        break;
      }
      default: {
        const unreachable: never = block;
        return unreachable;
      }
    }
  }
  return parts;
}

function isServerTool(tool: CustomToolBody | ServerToolBody): tool is ServerToolBody {
  return typeof tool.type === 'string' && tool.type !== 'custom';
}

/** Function tools only (rule 5): a server tool, web search included, is refused with its reason. */
function decodeTools(wire: CountTokensBody['tools']): FunctionTool[] | undefined {
  if (wire === undefined || wire.length === 0) return undefined;
  return wire.map((tool, index): FunctionTool => {
    if (isServerTool(tool)) {
      const what = tool.type.startsWith('web_search') ? 'Web search is' : `Server tools ('${tool.type}') are`;
      throw errors.unsupportedParameter(
        `tools[${index}]`,
        `${what} not available on /v1/messages: tools are function tools your code runs. Web search is available on /v1/chat/completions.`,
      );
    }
    checkToolDelivery(tool, index);
    const { input_schema: parameters } = tool;
    return {
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      parameters,
      ...(tool.strict !== undefined && { strict: tool.strict }),
      ...(tool.input_examples !== undefined && { inputExamples: tool.input_examples }),
      ...cacheControlOf(tool.cache_control),
    };
  });
}

/**
 * How the tool is offered and called. `eager_input_streaming` only changes how the call's input is
 * streamed, not what it is, and is accepted and ignored. A deferred tool would be loaded only by
 * the tool search server tool, and another caller than the model itself is a code execution server
 * tool: neither runs here.
 */
function checkToolDelivery(tool: CustomToolBody, index: number): void {
  if (tool.defer_loading === true) {
    throw errors.unsupportedParameter(
      `tools[${index}].defer_loading`,
      `'tools[${index}].defer_loading' is not supported: tool search is a server tool, which the gateway does not run.`,
    );
  }
  const caller = tool.allowed_callers?.find((value) => value !== 'direct');
  if (caller !== undefined) {
    throw errors.unsupportedParameter(
      `tools[${index}].allowed_callers`,
      `'tools[${index}].allowed_callers' '${caller}' is not supported: only 'direct' is (the gateway runs no code execution tool).`,
    );
  }
}

/**
 * `auto` and `none` without tools change nothing and are not forwarded; `any` or a named tool
 * without a matching tool cannot be satisfied and are a 400.
 */
function decodeToolChoice(choice: CountTokensBody['tool_choice'], tools: readonly FunctionTool[] | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  const declared = tools ?? [];
  switch (choice.type) {
    case 'auto':
    case 'none':
      return declared.length === 0 ? undefined : { kind: choice.type };
    case 'any':
      if (declared.length === 0) throw errors.invalidValue('tool_choice', "'tool_choice' of type 'any' needs at least one tool.");
      return { kind: 'required' };
    case 'tool':
      if (!declared.some((tool) => tool.name === choice.name)) {
        throw errors.invalidValue('tool_choice.name', `'tool_choice.name' names '${choice.name}', which is not one of the tools.`);
      }
      return { kind: 'tool', name: choice.name };
    default: {
      const unreachable: never = choice;
      return unreachable;
    }
  }
}

/**
 * Rule 2: a manual budget must stay below `max_tokens` (the schema holds it to 1024..199999); it is
 * never resized nor turned into adaptive thinking. count_tokens may leave `max_tokens` out.
 */
function decodeThinking(thinking: CountTokensBody['thinking'], maxTokens: number | undefined): ReasoningRequest | undefined {
  if (thinking === undefined) return undefined;
  switch (thinking.type) {
    case 'enabled':
      if (maxTokens !== undefined && thinking.budget_tokens >= maxTokens) {
        throw errors.invalidValue(
          'thinking.budget_tokens',
          `'thinking.budget_tokens' must be below 'max_tokens' (${maxTokens}); got ${thinking.budget_tokens}. Raise max_tokens or lower the budget.`,
        );
      }
      return { kind: 'budget', budgetTokens: thinking.budget_tokens };
    case 'adaptive':
      return { kind: 'adaptive' };
    case 'disabled':
      return { kind: 'disabled' };
    default: {
      const unreachable: never = thinking;
      return unreachable;
    }
  }
}
