/**
 * Tool-call arguments travel canonically as JSON text (the OpenAI formats' representation); the
 * Anthropic and Gemini formats want an object. Arguments that do not parse to an object are the
 * client's error, reported as a 400 naming the conversation field — never replaced by `{}`
 * (docs/protocols.md), which would run the tool with inputs nobody gave.
 */
import type { ToolCallPart } from '../canonical/index.ts';
import { rejectParameter } from '../policy/violation.ts';

export function toolArgumentsObject(call: ToolCallPart): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw rejectParameter(
      'messages',
      `The arguments of tool call '${call.id}' (${call.name}) are not a JSON object; this model needs them as one.`,
      'invalid_value',
    );
  }
  return parsed as Record<string, unknown>;
}
