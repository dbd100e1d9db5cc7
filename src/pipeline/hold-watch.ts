/**
 * Whether a stream has used up its hold (docs/billing.md, "Money caps"). An upstream that ignores
 * the request's max output tokens would otherwise stream on for as long as it likes while the
 * charge stays capped at the hold; the stream is stopped instead, once the output it delivered
 * costs more than the hold, and ends with an in-stream error.
 *
 * Delivered output is what was forwarded to the client, counted by the local tokenizer: a
 * provider's running count may include work it never delivers, and its final count is settled
 * (and capped) like any other. Two conditions, both needed: the local count of the delivered text
 * is above the request's max output tokens by more than LOCAL_COUNT_MARGIN (the local tokenizer is
 * not the provider's), and the prompt (as the provider reported it, else the estimate) with that
 * output, priced like a stream cut short, costs more than the hold. A stream within its max output
 * tokens is never stopped here.
 *
 * Cheap on the way: delivered text is measured in bytes (an upper bound of its tokens) and
 * tokenized only once the bytes pass the allowance, each piece once.
 */
import type { StreamEvent, Usage } from '../canonical/index.ts';
import { usageWithOutput } from '../billing/partial-usage.ts';
import type { Picos } from '../core/money.ts';
import { countTextTokens } from '../tokens/tokenizer.ts';

/** How far the local count of delivered output may pass the max output tokens before it counts as more (5/4). */
const LOCAL_COUNT_MARGIN = { numerator: 5, denominator: 4 } as const;

export interface HoldWatchTerms {
  /** The most output the upstream was asked for (catalog/request-bounds.ts). */
  readonly maxOutputTokens: number;
  /** The hold's amount. */
  readonly hold: Picos;
  /** The prompt's estimate, the input of a stream whose provider reported none (computed when needed). */
  readonly promptTokens: () => number;
  /** The charge of a usage on the route that serves the stream, at the payer's rate. */
  readonly price: (usage: Usage) => Picos;
}

export class HoldWatch {
  readonly #terms: HoldWatchTerms;
  /** The local count beyond which delivered output is more than the request allows. */
  readonly #localAllowance: number;
  #deliveredBytes = 0;
  /** Delivered text not counted yet (kept only until it is). */
  #uncounted: string[] = [];
  #uncountedReasoning: string[] = [];
  #countedTokens = 0;
  #countedReasoning = 0;
  /** Whether output was delivered since the last look: a batch of usage or a finish alone delivers none. */
  #delivering = false;

  constructor(terms: HoldWatchTerms) {
    this.#terms = terms;
    this.#localAllowance = Math.floor((terms.maxOutputTokens * LOCAL_COUNT_MARGIN.numerator) / LOCAL_COUNT_MARGIN.denominator);
  }

  observe(event: StreamEvent): void {
    switch (event.type) {
      case 'text-delta':
        this.#deliver(event.text, this.#uncounted);
        return;
      case 'reasoning-delta':
        this.#deliver(event.text, this.#uncountedReasoning);
        return;
      case 'tool-call-start':
        this.#deliver(event.name, this.#uncounted);
        return;
      case 'tool-call-delta':
        this.#deliver(event.argumentsDelta, this.#uncounted);
        return;
      default:
        return;
    }
  }

  /**
   * Whether what was delivered so far costs more than the hold; looked at only when output was
   * delivered since the last look. `reported`: the provider's latest usage, for the prompt's size.
   */
  exhausted(reported: Usage | undefined): boolean {
    if (!this.#delivering) return false;
    this.#delivering = false;
    if (this.#deliveredBytes <= this.#localAllowance) return false;
    this.#count();
    if (this.#countedTokens <= this.#localAllowance) return false;
    const { hold, promptTokens, price } = this.#terms;
    const input = reported && { ...reported, outputTokens: 0, reasoningTokens: 0 };
    return price(usageWithOutput(input, promptTokens(), this.#countedTokens, this.#countedReasoning)) > hold;
  }

  #deliver(text: string, uncounted: string[]): void {
    this.#delivering = true;
    this.#deliveredBytes += Buffer.byteLength(text, 'utf8');
    uncounted.push(text);
  }

  #count(): void {
    const reasoning = countTextTokens(this.#uncountedReasoning.join(''));
    this.#countedReasoning += reasoning;
    this.#countedTokens += countTextTokens(this.#uncounted.join('')) + reasoning;
    this.#uncounted = [];
    this.#uncountedReasoning = [];
  }
}
