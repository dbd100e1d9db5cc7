/**
 * Usage of a stream that ended without the provider's final count: the client disconnected, or
 * the upstream failed after output had been forwarded. The rule (docs/billing.md): the client pays
 * for the prompt and for what was generated up to that point. Reported counts are used when the
 * provider sent any; the streamed text is counted with the local tokenizer as a floor, because a
 * provider's running count may lag behind the text it has already sent.
 */
import type { Usage } from '../canonical/index.ts';
import { totalInputTokens } from '../canonical/index.ts';
import { countTextTokens } from '../tokens/tokenizer.ts';

export interface StreamedOutput {
  /** Visible text, tool names and tool arguments forwarded to the client. */
  readonly outputText: string;
  readonly reasoningText: string;
}

export function usageOfUnfinishedStream(reported: Usage | undefined, promptTokens: number, streamed: StreamedOutput): Usage {
  const reasoningEstimate = countTextTokens(streamed.reasoningText);
  return usageWithOutput(reported, promptTokens, countTextTokens(streamed.outputText) + reasoningEstimate, reasoningEstimate);
}

/**
 * The usage of a stream so far: the provider's reported input, else the prompt estimate, and the
 * larger of the reported output and `outputTokens` counted locally (of which `reasoningTokens`).
 */
export function usageWithOutput(reported: Usage | undefined, promptTokens: number, outputTokens: number, reasoningTokens: number): Usage {
  const inputReported = reported !== undefined && totalInputTokens(reported) > 0;
  return {
    inputTokens: inputReported ? reported.inputTokens : promptTokens,
    cacheReadTokens: inputReported ? reported.cacheReadTokens : 0,
    cacheWriteTokens: inputReported ? reported.cacheWriteTokens : 0,
    ...(inputReported && reported.cacheWrite1hTokens !== undefined ? { cacheWrite1hTokens: reported.cacheWrite1hTokens } : {}),
    outputTokens: Math.max(reported?.outputTokens ?? 0, outputTokens),
    reasoningTokens: Math.max(reported?.reasoningTokens ?? 0, reasoningTokens),
  };
}
