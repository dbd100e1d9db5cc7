/**
 * The size of an embeddings request in input tokens, measured as cheaply as each use allows (as
 * PromptSize does for text, ./estimate.ts): token-id inputs count exactly; text is bounded by its
 * UTF-8 bytes (every token stands for at least one byte) and tokenized only where the bound is not
 * enough. The local tokenizer's count is also what an upstream that reports no usage is billed on
 * (docs/embeddings.md, "Metering").
 */
import type { EmbeddingInput } from '../canonical/index.ts';
import { countTextTokens } from './tokenizer.ts';

export class EmbeddingSize {
  readonly #inputs: readonly EmbeddingInput[];
  #bound: number | undefined;
  #tokens: number | undefined;

  constructor(inputs: readonly EmbeddingInput[]) {
    this.#inputs = inputs;
  }

  /** Never below `tokens`: what the credit hold and a key's token limit pre-check use. */
  get bound(): number {
    this.#bound ??= this.#measure((text) => Buffer.byteLength(text, 'utf8'));
    return this.#bound;
  }

  /** The local tokenizer's count. */
  get tokens(): number {
    this.#tokens ??= this.#measure(countTextTokens);
    return this.#tokens;
  }

  /** Whether the count is over `limit`, tokenizing only when the bound is over it. */
  exceeds(limit: number): boolean {
    return this.bound > limit && this.tokens > limit;
  }

  #measure(measureText: (text: string) => number): number {
    let total = 0;
    for (const input of this.#inputs) total += input.kind === 'tokens' ? input.tokens.length : measureText(input.text);
    return total;
  }
}
