/**
 * Canonical reasoning → Gemini `thinkingConfig` (docs/protocols.md).
 *
 * Effort levels use `thinkingBudget`, which every thinking generation accepts (the newer
 * `thinkingLevel` is rejected by the older models), with the budgets Google's own OpenAI-compatible
 * endpoint uses for `reasoning_effort`: low 1024, medium 8192, high 24576. `none` and disabled
 * thinking are a budget of 0 (models that cannot stop thinking reject it upstream; the catalog
 * should not list `none` among their efforts). A messages-style budget is sent as is; adaptive
 * thinking is the dynamic budget −1. Whenever thinking is on, thought summaries are asked for, so
 * clients receive the reasoning text the other protocols return.
 * @see https://ai.google.dev/gemini-api/docs/thinking
 */
import type { CanonicalRequest, ReasoningEffort } from '../../canonical/index.ts';
import type { GeminiThinkingConfig } from './wire.ts';

const EFFORT_BUDGET: Record<ReasoningEffort, number> = { none: 0, low: 1024, medium: 8192, high: 24576 };
/** Lets the model decide how much to think. */
const DYNAMIC_BUDGET = -1;

export function geminiThinkingConfig(request: CanonicalRequest): GeminiThinkingConfig | undefined {
  const reasoning = request.reasoning;
  if (reasoning === undefined) return undefined;
  switch (reasoning.kind) {
    case 'effort':
      return withThoughts(EFFORT_BUDGET[reasoning.effort]);
    case 'budget':
      return withThoughts(reasoning.budgetTokens);
    case 'adaptive':
      return withThoughts(DYNAMIC_BUDGET);
    case 'disabled':
      return withThoughts(0);
    default: {
      const unknown: never = reasoning;
      throw new Error(`unknown reasoning request ${JSON.stringify(unknown)}`);
    }
  }
}

function withThoughts(thinkingBudget: number): GeminiThinkingConfig {
  return thinkingBudget === 0 ? { thinkingBudget } : { thinkingBudget, includeThoughts: true };
}
