/**
 * Canonical parameter references named the way a Responses client wrote them. Built by the decoder,
 * which knows where each canonical piece came from: input items are regrouped (an assistant message
 * and the function calls after it are one canonical message; system and developer items are hoisted),
 * so message indexes shift; a function tool is written in one of two shapes; the reasoning effort in
 * one of two fields.
 */
import { textParamNamer, type ParamNamer, type PolicyField } from '../../policy/violation.ts';

/** The canonical fields a Responses body can set, by their Responses names. */
const FIELD_NAMES: Partial<Record<PolicyField, string>> = {
  maxOutputTokens: 'max_output_tokens',
  temperature: 'temperature',
  topP: 'top_p',
  tools: 'tools',
  toolChoice: 'tool_choice',
  user: 'user',
  verbosity: 'text.verbosity',
  reasoningSummary: 'reasoning.summary',
  stream: 'stream',
  messages: 'input',
};

export interface ResponsesOrigins {
  /** Wire index (in `input`) of each canonical message; 0 for a string `input`. */
  readonly messages: readonly number[];
  /** Wire index and shape (in `tools`) of each canonical function tool. */
  readonly tools: readonly { readonly index: number; readonly nested: boolean }[];
  /** Which of the two fields carried the effort. */
  readonly reasoningField: 'reasoning_effort' | 'reasoning.effort';
}

export function responsesParamNames(origins: ResponsesOrigins): ParamNamer {
  return textParamNamer((ref) => {
    switch (ref.kind) {
      case 'field':
        if (ref.field === 'reasoning') return origins.reasoningField;
        // Fields a Responses body cannot set (seed, stop, web search…) keep their canonical name.
        return FIELD_NAMES[ref.field] ?? ref.field;
      case 'tool-strict': {
        const origin = origins.tools[ref.toolIndex];
        if (origin === undefined) return `tools[${ref.toolIndex}].strict`;
        return origin.nested ? `tools[${origin.index}].function.strict` : `tools[${origin.index}].strict`;
      }
      // A Responses body has no example inputs; the reference is named all the same.
      case 'tool-input-examples':
        return `tools[${origins.tools[ref.toolIndex]?.index ?? ref.toolIndex}].input_examples`;
      case 'response-format-strict':
        return 'text.format';
      case 'image':
        return `input[${origins.messages[ref.messageIndex] ?? ref.messageIndex}].content[${ref.partIndex}]`;
      case 'extra-body':
        return `extra_body.${ref.path}`;
      default: {
        const unreachable: never = ref;
        return unreachable;
      }
    }
  });
}
