/**
 * Canonical parameter references named the way the chat client wrote them. Built by the decoder,
 * which knows where each canonical piece came from (system messages are hoisted, so message indexes
 * shift; `max_tokens` and `max_completion_tokens` are one canonical field).
 */
import { textParamNamer, type ParamNamer, type PolicyField } from '../../policy/violation.ts';

/** The canonical fields a chat body can set, by their chat names; the others keep their canonical name. */
const FIELD_NAMES: Partial<Record<PolicyField, string>> = {
  stop: 'stop',
  seed: 'seed',
  presencePenalty: 'presence_penalty',
  frequencyPenalty: 'frequency_penalty',
  logprobs: 'logprobs',
  topLogprobs: 'top_logprobs',
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
  parallelToolCalls: 'parallel_tool_calls',
  responseFormat: 'response_format',
  reasoning: 'reasoning_effort',
  tools: 'tools',
  toolChoice: 'tool_choice',
  user: 'user',
  verbosity: 'verbosity',
  stream: 'stream',
  messages: 'messages',
};

export interface ChatOrigins {
  /** Wire index of each canonical message. */
  readonly messages: readonly number[];
  /** Wire index (in `tools`) of each canonical function tool. */
  readonly tools: readonly number[];
  /** Wire index of the `{type: web_search}` tool, when there is one. */
  readonly webSearchTool: number | undefined;
  /** Which of the two output-limit fields carried the value (max_tokens wins when both are sent). */
  readonly maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

export function chatParamNames(origins: ChatOrigins): ParamNamer {
  return textParamNamer((ref) => {
    switch (ref.kind) {
      case 'field':
        if (ref.field === 'maxOutputTokens') return origins.maxTokensField;
        if (ref.field === 'webSearch') return origins.webSearchTool === undefined ? 'tools' : `tools[${origins.webSearchTool}]`;
        return FIELD_NAMES[ref.field] ?? ref.field;
      case 'tool-strict':
        return `tools[${origins.tools[ref.toolIndex] ?? ref.toolIndex}].function.strict`;
      // A chat body has no example inputs; the reference is named all the same.
      case 'tool-input-examples':
        return `tools[${origins.tools[ref.toolIndex] ?? ref.toolIndex}].function.input_examples`;
      case 'response-format-strict':
        return 'response_format.json_schema.strict';
      case 'image':
        return `messages[${origins.messages[ref.messageIndex] ?? ref.messageIndex}].content[${ref.partIndex}]`;
      case 'extra-body':
        return `extra_body.${ref.path}`;
      default: {
        const unreachable: never = ref;
        return unreachable;
      }
    }
  });
}
