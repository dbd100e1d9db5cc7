/**
 * Size limits of the route: the output cap and the context window. The prompt size is the local
 * estimate (billing/estimate.ts), so the window check only rejects prompts that are over it by the
 * estimate; a provider may still refuse one that is close.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { PromptSize } from '../tokens/estimate.ts';
import type { LimitsConfig } from '../config/schema.ts';
import { fieldRef, type PolicyViolation } from './violation.ts';

export function checkLimits(request: CanonicalRequest, limits: LimitsConfig, prompt: PromptSize): PolicyViolation | undefined {
  const maxTokens = limits.max_tokens;
  if (request.maxOutputTokens !== undefined && typeof maxTokens === 'number' && request.maxOutputTokens > maxTokens) {
    const requested = request.maxOutputTokens;
    return {
      ref: fieldRef('maxOutputTokens'),
      message: (param) => `'${param}' is too large: ${requested}. This model supports at most ${maxTokens} output tokens.`,
    };
  }
  const window = limits.context_window;
  if (typeof window === 'number') {
    if (prompt.exceeds(window)) {
      const estimate = prompt.tokens;
      return {
        ref: fieldRef('messages'),
        code: 'invalid_value',
        message: () => `This model's context window is ${window} tokens; the prompt is about ${estimate} tokens. Shorten the messages.`,
      };
    }
  }
  return undefined;
}
