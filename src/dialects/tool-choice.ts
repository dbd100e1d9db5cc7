/**
 * `tool_choice` as the OpenAI formats write it (chat completions, responses), decoded the same way:
 * `none` and `auto` without function tools change nothing and are not forwarded; `required` or a
 * named function without a matching function tool cannot be satisfied and are a 400.
 */
import type { FunctionTool, ToolChoice } from '../canonical/index.ts';
import { errors } from '../core/errors.ts';

/** The choice with the function's name taken out of its dialect's shape, and where that name was written. */
export type WireToolChoice = 'none' | 'auto' | 'required' | { readonly name: string; readonly param: string };

export function decodeToolChoice(choice: WireToolChoice | undefined, tools: readonly FunctionTool[]): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (typeof choice === 'string') {
    if (tools.length === 0) {
      if (choice === 'required') throw errors.invalidValue('tool_choice', "'tool_choice' = 'required' needs at least one function tool.");
      return undefined;
    }
    return { kind: choice };
  }
  const { name, param } = choice;
  if (!tools.some((tool) => tool.name === name)) {
    throw errors.invalidValue(param, `'${param}' names '${name}', which is not one of the function tools.`);
  }
  return { kind: 'tool', name };
}
