/**
 * Canonical reasoning → Anthropic `thinking` (+ `output_config.effort`) (docs/protocols.md).
 *
 * - A thinking budget (messages dialect) is sent as is; it must satisfy 1024 ≤ budget < max_tokens,
 *   and is never resized or turned into adaptive thinking.
 * - Adaptive and disabled thinking are sent as is.
 * - An effort level (chat `reasoning_effort`, responses `reasoning`) follows this policy:
 *   - `none` → `thinking: {type: "disabled"}`;
 *   - on a model that has no manual thinking (`capabilities.thinking_manual: false` in the catalog)
 *     → adaptive thinking with `output_config.effort` set to the level;
 *   - otherwise → manual thinking with a budget that is a share of `max_tokens` (low ¼, medium ½,
 *     high ¾), at least the API's minimum of 1024, so that room for the answer always remains.
 *   When `max_tokens` leaves no room for even the minimum budget the level cannot be expressed, and
 *   the request is refused with 400 naming the client's reasoning field rather than clamped.
 */
import type { CanonicalRequest, ReasoningEffort } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { rejectParameter } from '../../policy/violation.ts';
import type { AnthropicEffort, AnthropicThinking } from './wire.ts';

/** The API's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

const BUDGET_SHARE: Record<AnthropicEffort, number> = { low: 0.25, medium: 0.5, high: 0.75 };

export interface AnthropicReasoning {
  readonly thinking?: AnthropicThinking;
  readonly effort?: AnthropicEffort;
}

export function anthropicReasoning(request: CanonicalRequest, endpoint: RouteEndpoint, maxTokens: number): AnthropicReasoning {
  const reasoning = request.reasoning;
  if (reasoning === undefined) return {};
  switch (reasoning.kind) {
    case 'budget':
      checkBudget(reasoning.budgetTokens, maxTokens);
      return { thinking: { type: 'enabled', budget_tokens: reasoning.budgetTokens } };
    case 'adaptive':
      return { thinking: { type: 'adaptive' } };
    case 'disabled':
      return { thinking: { type: 'disabled' } };
    case 'effort':
      return effortReasoning(reasoning.effort, endpoint, maxTokens);
    default: {
      const unknown: never = reasoning;
      throw new Error(`unknown reasoning request ${JSON.stringify(unknown)}`);
    }
  }
}

function effortReasoning(effort: ReasoningEffort, endpoint: RouteEndpoint, maxTokens: number): AnthropicReasoning {
  if (effort === 'none') return { thinking: { type: 'disabled' } };
  if (endpoint.capabilities.thinking_manual === false) return { thinking: { type: 'adaptive' }, effort };
  const budget = Math.max(MIN_THINKING_BUDGET, Math.floor(maxTokens * BUDGET_SHARE[effort]));
  if (budget >= maxTokens) {
    throw rejectParameter(
      'reasoning',
      `A reasoning effort of '${effort}' needs a thinking budget of at least ${MIN_THINKING_BUDGET} tokens below the output limit, which is ${maxTokens} here; raise the maximum output tokens.`,
    );
  }
  return { thinking: { type: 'enabled', budget_tokens: budget } };
}

function checkBudget(budget: number, maxTokens: number): void {
  if (budget >= MIN_THINKING_BUDGET && budget < maxTokens) return;
  throw rejectParameter('reasoning', `The thinking budget must be at least ${MIN_THINKING_BUDGET} tokens and below max_tokens (${maxTokens}); got ${budget}.`);
}
