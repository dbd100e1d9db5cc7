/**
 * For upstreams whose only reasoning control is an effort level (OpenAI chat and responses):
 * Anthropic-style `disabled` is that API's default and maps to sending nothing; a token budget or
 * adaptive thinking has no equivalent and is refused rather than guessed (docs/protocols.md:
 * converting between them is a policy decision, not translation).
 */
import type { CanonicalRequest, ReasoningEffort } from '../canonical/index.ts';
import { rejectParameter } from '../policy/violation.ts';

export function reasoningEffort(request: CanonicalRequest): ReasoningEffort | undefined {
  const reasoning = request.reasoning;
  if (reasoning === undefined) return undefined;
  switch (reasoning.kind) {
    case 'effort':
      return reasoning.effort;
    case 'disabled':
      return undefined;
    case 'budget':
    case 'adaptive':
      throw rejectParameter('reasoning', `This model takes a reasoning effort level, not ${reasoning.kind} thinking.`);
    default: {
      const unknown: never = reasoning;
      throw new Error(`unknown reasoning request ${JSON.stringify(unknown)}`);
    }
  }
}
