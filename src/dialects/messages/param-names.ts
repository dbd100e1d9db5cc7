/**
 * Canonical parameter references named the way a Messages client wrote them. The decoding keeps
 * the body's shape (one canonical message per wire message, one part per block, one function tool
 * per tool, the system prompt outside the conversation as in the wire format), so a reference
 * names its field without a table of origins.
 */
import { textParamNamer, type ParamNamer, type PolicyField, type TextParamRef } from '../../policy/violation.ts';

/** The canonical fields a Messages body can set, by their Messages names. */
const FIELD_NAMES: Partial<Record<PolicyField, string>> = {
  maxOutputTokens: 'max_tokens',
  stop: 'stop_sequences',
  temperature: 'temperature',
  topP: 'top_p',
  topK: 'top_k',
  parallelToolCalls: 'tool_choice.disable_parallel_tool_use',
  reasoning: 'thinking',
  tools: 'tools',
  toolChoice: 'tool_choice',
  user: 'metadata.user_id',
  outputEffort: 'output_config.effort',
  responseFormat: 'output_config.format',
  stream: 'stream',
  messages: 'messages',
};

export const messagesParamNames: ParamNamer = textParamNamer((ref: TextParamRef): string => {
  switch (ref.kind) {
    case 'field':
      // Fields a Messages body cannot set (seed, logprobs, response_format…) keep their canonical name.
      return FIELD_NAMES[ref.field] ?? ref.field;
    case 'tool-strict':
      return `tools[${ref.toolIndex}].strict`;
    case 'tool-input-examples':
      return `tools[${ref.toolIndex}].input_examples`;
    case 'response-format-strict':
      return 'output_config.format';
    case 'image': {
      const block = `messages[${ref.messageIndex}].content[${ref.partIndex}]`;
      return ref.innerIndex === undefined ? block : `${block}.content[${ref.innerIndex}]`;
    }
    case 'extra-body':
      return `extra_body.${ref.path}`;
    default: {
      const unreachable: never = ref;
      return unreachable;
    }
  }
});
