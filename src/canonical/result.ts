import type { AssistantContentPart } from './message.ts';
import type { Usage, WebSearchInfo } from './usage.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/** The unified finish reason with the provider's raw value kept beside it. */
export interface Finish {
  readonly reason: FinishReason;
  /** The stop sequence that ended the output, when the provider reports it. */
  readonly stopSequence?: string;
  readonly raw: string | null;
  /** Why the model refused, when the provider says (Anthropic's `stop_details` of a `refusal`). */
  readonly refusal?: RefusalDetails;
}

/** The provider's category of a refusal and its explanation, each null when it gives none. */
export interface RefusalDetails {
  readonly category: string | null;
  readonly explanation: string | null;
}

export interface Citation {
  readonly url: string;
  readonly title?: string;
  readonly startIndex?: number;
  readonly endIndex?: number;
}

/** One candidate token at a position of the output: its text, log probability and UTF-8 bytes. */
export interface TokenLogprob {
  readonly token: string;
  readonly logprob: number;
  /** null when the provider gives no byte form for the token. */
  readonly bytes: readonly number[] | null;
}

/** A generated text token, with the most likely tokens at its position as the provider listed them. */
export interface ContentLogprob extends TokenLogprob {
  readonly topLogprobs: readonly TokenLogprob[];
}

/** A complete (non-streaming) upstream result in canonical form. */
export interface CanonicalResult {
  /** The provider's own response id, for logs. */
  readonly providerResponseId?: string;
  /** The model name the provider reported. */
  readonly providerModel?: string;
  readonly content: readonly AssistantContentPart[];
  readonly finish: Finish;
  readonly usage: Usage;
  /** The usage object as the provider reported it, in its own field names (kept with the request log row). */
  readonly providerUsage?: Readonly<Record<string, unknown>>;
  readonly webSearch?: WebSearchInfo;
  readonly citations?: readonly Citation[];
  /** The text's tokens in order, when the request asked for logprobs and the provider returned them. */
  readonly logprobs?: readonly ContentLogprob[];
}
