/**
 * Responses body → CanonicalRequest. The schema has already checked every type and limit; this
 * rejects what the endpoint does not implement (by name, before any credit moves), adds the rules
 * that span fields, and records where each canonical piece came from, so that policy errors name
 * the client's own field (`input[2].content[0]`, `tools[1].strict`, `reasoning.effort`).
 * Omission stays omission: an absent field is undefined in the canonical request.
 */
import type { AssistantContentPart, CanonicalRequest, FunctionTool, Message, ReasoningEffort, SystemBlock, UserContentPart } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import type { ParamNamer } from '../../policy/violation.ts';
import { decodeImageUrl } from '../image-url.ts';
import { cacheOptions, fallbackModels, providerPreferences } from '../gateway-options.ts';
import { decodeToolChoice } from '../tool-choice.ts';
import { responsesParamNames, type ResponsesOrigins } from './param-names.ts';
import { REFUSED_FIELDS, type ResponsesBody, type ResponsesInputItem, type ResponsesMessageItem } from './schema.ts';
import { callDataOf, reasoningSignatureOf } from './provider-data.ts';
import { checkServiceTier, refuseFields } from '../vendor-fields.ts';

export interface DecodedResponsesRequest {
  readonly request: CanonicalRequest;
  readonly names: ParamNamer;
}

export function decodeResponsesRequest(body: ResponsesBody): DecodedResponsesRequest {
  rejectUnsupported(body);
  const conversation = decodeInput(body.input, body.instructions);
  const tools = decodeTools(body.tools);
  const reasoning = decodeReasoning(body);
  const request: CanonicalRequest = {
    dialect: 'responses',
    model: body.model,
    fallbackModels: fallbackModels(body),
    system: conversation.system,
    messages: conversation.messages,
    maxOutputTokens: body.max_output_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    tools: tools.functions.length ? tools.functions : undefined,
    toolChoice: decodeToolChoice(
      typeof body.tool_choice === 'object' ? { name: body.tool_choice.name, param: 'tool_choice.name' } : body.tool_choice,
      tools.functions,
    ),
    reasoning: reasoning.effort === undefined ? undefined : { kind: 'effort', effort: reasoning.effort },
    reasoningSummary: body.reasoning?.summary ?? body.reasoning?.generate_summary ?? undefined,
    verbosity: body.text?.verbosity ?? undefined,
    // A background response answers with JSON even when a stream was asked for (docs/responses.md).
    stream: body.stream === true && body.background !== true,
    user: body.user,
    metadata: body.metadata,
    store: body.store,
    cache: cacheOptions(body),
    provider: providerPreferences(body),
  };
  const names = responsesParamNames({ messages: conversation.origins, tools: tools.origins, reasoningField: reasoning.field });
  return { request, names };
}

/**
 * Fields of the OpenAI Responses API the gateway does not implement (docs/responses.md): a 400
 * naming the field, whatever its value, rather than a silent difference in behaviour.
 */
function rejectUnsupported(body: ResponsesBody): void {
  refuseFields(body, REFUSED_FIELDS);
  if (body.text?.format !== undefined) throw errors.unsupportedParameter('text.format', "'text.format' is not supported on this endpoint.");
  checkServiceTier(body.service_tier, ['auto', 'default']);
  if (body.truncation === 'auto') {
    throw errors.unsupportedParameter('truncation', "'truncation' 'auto' is not supported: the gateway never drops input; send what fits the context window.");
  }
  // Every reasoning item the gateway returns carries its encrypted content already (docs/responses.md).
  body.include?.forEach((value, index) => {
    if (value !== 'reasoning.encrypted_content') {
      throw errors.unsupportedParameter(`include[${index}]`, `'include[${index}]' '${value}' is not supported: only 'reasoning.encrypted_content' is.`);
    }
  });
  const summary = body.reasoning?.summary ?? undefined;
  const generated = body.reasoning?.generate_summary ?? undefined;
  if (summary !== undefined && generated !== undefined && summary !== generated) {
    throw errors.invalidValue(
      'reasoning.summary',
      `'reasoning.summary' (${summary}) disagrees with 'reasoning.generate_summary' (${generated}); send one of them.`,
    );
  }
  if (body.store === false && body.background === true) {
    throw errors.invalidValue('store', "'store' cannot be false for a background response: it is kept so that it can be polled.");
  }
  body.tools?.forEach((tool, index) => {
    if (tool.type !== 'function') {
      throw errors.unsupportedParameter(`tools[${index}]`, `'tools[${index}]': server-side web search is not available on this endpoint.`);
    }
  });
}

/** `reasoning_effort` and the SDK's `reasoning.effort` are one setting; both may be sent when they agree. */
function decodeReasoning(body: ResponsesBody): { effort: ReasoningEffort | undefined; field: ResponsesOrigins['reasoningField'] } {
  const top = body.reasoning_effort;
  const nested = body.reasoning?.effort;
  if (top !== undefined && nested !== undefined && top !== nested) {
    throw errors.invalidValue('reasoning.effort', `'reasoning.effort' (${nested}) disagrees with 'reasoning_effort' (${top}); send one of them.`);
  }
  return top === undefined && nested !== undefined ? { effort: nested, field: 'reasoning.effort' } : { effort: top, field: 'reasoning_effort' };
}

interface DecodedConversation {
  readonly system: SystemBlock[];
  readonly messages: Message[];
  readonly origins: number[];
}

/**
 * Items become canonical messages in order. An assistant message and the reasoning and function call
 * items around it are one assistant turn (as chat's assistant message with `tool_calls`), so that providers that
 * require alternating turns accept the conversation; each function call output is a tool message.
 */
function decodeInput(input: ResponsesBody['input'], instructions: string | undefined): DecodedConversation {
  const system: SystemBlock[] = instructions === undefined ? [] : [{ text: instructions }];
  if (typeof input === 'string') return { system, messages: [{ role: 'user', content: [{ type: 'text', text: input }] }], origins: [0] };
  const messages: Message[] = [];
  const origins: number[] = [];
  // Outputs carry only the call id; providers that key results by function name need it.
  const toolNames = new Map<string, string>();
  let assistant: AssistantContentPart[] | undefined;
  const pushAssistant = (parts: readonly AssistantContentPart[], index: number) => {
    // A reasoning item with no summary adds nothing, not even an empty turn.
    if (parts.length === 0) return;
    if (assistant === undefined) {
      assistant = [];
      messages.push({ role: 'assistant', content: assistant });
      origins.push(index);
    }
    assistant.push(...parts);
  };
  input.forEach((item: ResponsesInputItem, index) => {
    const at = `input[${index}]`;
    if ('role' in item) {
      if (item.role === 'assistant') return pushAssistant(assistantContent(item, at), index);
      assistant = undefined;
      if (item.role === 'user') {
        messages.push({ role: 'user', content: userContent(item.content, at) });
        origins.push(index);
        return;
      }
      for (const text of textsOf(item.content)) system.push({ text });
      return;
    }
    switch (item.type) {
      case 'function_call':
        toolNames.set(item.call_id, item.name);
        return pushAssistant([{ type: 'tool_call', id: item.call_id, name: item.name, arguments: item.arguments, ...callDataOf(item) }], index);
      case 'reasoning':
        return pushAssistant(reasoningParts(item), index);
      case 'function_call_output': {
        assistant = undefined;
        const name = toolNames.get(item.call_id);
        messages.push({
          role: 'tool',
          content: [{ type: 'tool_result', toolCallId: item.call_id, ...(name === undefined ? {} : { name }), content: [{ type: 'text', text: item.output }] }],
        });
        origins.push(index);
        return;
      }
      default: {
        const unreachable: never = item;
        return unreachable;
      }
    }
  });
  if (messages.length === 0) {
    throw errors.invalidValue('input', "'input' must hold at least one user, assistant or function call item besides system and developer messages.");
  }
  return { system, messages, origins };
}

/**
 * The summaries the gateway returned go back as the turn's reasoning, as chat's `reasoning_content`
 * does; the signature rides on the last one, or on a redacted part when there is no summary.
 */
function reasoningParts(item: Extract<ResponsesInputItem, { type: 'reasoning' }>): AssistantContentPart[] {
  const signature = reasoningSignatureOf(item.encrypted_content);
  const parts: AssistantContentPart[] = item.summary.map((summary) => ({ type: 'reasoning', text: summary.text }));
  if (signature === undefined) return parts;
  const last = parts.pop();
  // An Anthropic reasoning part without text is redacted thinking; other families' have no such kind.
  const bare: AssistantContentPart = { type: 'reasoning', text: '', signature, ...(signature.family === 'anthropic' && { redacted: true }) };
  parts.push(last === undefined || last.type !== 'reasoning' ? bare : { ...last, signature });
  return parts;
}

function textsOf(content: string | readonly { readonly text: string }[]): string[] {
  return typeof content === 'string' ? [content] : content.map((part) => part.text);
}

function userContent(content: Extract<ResponsesMessageItem, { role: 'user' }>['content'], at: string): UserContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, partIndex): UserContentPart => {
    switch (part.type) {
      case 'input_text':
        return { type: 'text', text: part.text };
      case 'input_image':
        return decodeImageUrl({ url: part.image_url, detail: part.detail }, `${at}.content[${partIndex}].image_url`);
      default: {
        const unreachable: never = part;
        return unreachable;
      }
    }
  });
}

function assistantContent(item: Extract<ResponsesMessageItem, { role: 'assistant' }>, at: string): AssistantContentPart[] {
  if (typeof item.content === 'string') return [{ type: 'text', text: item.content }];
  if (item.content.length === 0) throw errors.invalidValue(`${at}.content`, `'${at}.content' must hold at least one part.`);
  return item.content.map((part): AssistantContentPart => ({ type: 'text', text: part.type === 'output_text' ? part.text : part.refusal }));
}

interface DecodedTools {
  readonly functions: FunctionTool[];
  readonly origins: ResponsesOrigins['tools'][number][];
}

/** Both tool shapes decode alike; the origin remembers which one, so `strict` is named where it was written. */
function decodeTools(wire: ResponsesBody['tools']): DecodedTools {
  const functions: FunctionTool[] = [];
  const origins: DecodedTools['origins'] = [];
  (wire ?? []).forEach((tool, index) => {
    // Web search tools were rejected by name before decoding.
    if (tool.type !== 'function') return;
    const nested = 'function' in tool;
    const fn = nested ? tool.function : tool;
    functions.push({
      name: fn.name,
      ...(fn.description === undefined ? {} : { description: fn.description }),
      ...(fn.parameters === undefined || fn.parameters === null ? {} : { parameters: fn.parameters }),
      ...(fn.strict === undefined || fn.strict === null ? {} : { strict: fn.strict }),
    });
    origins.push({ index, nested });
  });
  return { functions, origins };
}
