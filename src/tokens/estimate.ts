/**
 * Pre-flight prompt size: what a request is likely to cost in input tokens before any provider has
 * counted it. Used for the credit quote, the context-window check and free token counting. It is
 * an estimate (providers tokenize differently); bills always come from the usage a provider reports.
 */
import type { CanonicalRequest, ContentPart, Message } from '../canonical/index.ts';
import { countTextTokens } from './tokenizer.ts';

/**
 * Fixed per-image estimate: the upper end of what current providers charge for one image at full
 * detail (about 1,600 tokens for Anthropic's largest downscaled image, ~1,100 for OpenAI's
 * high-detail tiling). Images are not decoded to measure them.
 */
export const IMAGE_TOKEN_ESTIMATE = 1600;

/** Fixed per-document estimate for binary documents (a few PDF pages); plain text is tokenized. */
export const DOCUMENT_TOKEN_ESTIMATE = 3000;

/** Framing overhead per message (role markers), as in OpenAI's published counting recipe. */
const MESSAGE_OVERHEAD_TOKENS = 3;
/** Every reply is primed with an assistant header. */
const REPLY_PRIMING_TOKENS = 3;

/** How many tokens a piece of text counts for. */
type TextMeasure = (text: string) => number;

/**
 * An upper bound of countTextTokens: every token of the encoding stands for at least one byte of
 * UTF-8, so a text never has more tokens than bytes. Free to compute, about four times the count
 * for English text.
 */
const utf8Bytes: TextMeasure = (text) => Buffer.byteLength(text, 'utf8');

/**
 * At most this many characters of one request are tokenized (about a tenth of a second of the
 * event loop at worst); the rest counts for its UTF-8 byte bound, so an estimate never drops below
 * the tokenizer's count. A body of the 5 MiB limit would otherwise block the process for seconds.
 */
export const MAX_TOKENIZED_CHARS = 256 * 1024;

/** countTextTokens until the request's MAX_TOKENIZED_CHARS are spent, the byte bound after. */
function boundedTokenizer(): TextMeasure {
  let left = MAX_TOKENIZED_CHARS;
  return (text) => {
    if (text.length <= left) {
      left -= text.length;
      return countTextTokens(text);
    }
    const head = text.slice(0, left);
    left = 0;
    return countTextTokens(head) + utf8Bytes(text.slice(head.length));
  };
}

export function estimatePromptTokens(request: CanonicalRequest): number {
  return measurePrompt(request, boundedTokenizer());
}

export function estimateMessagesTokens(messages: readonly Message[]): number {
  return measureMessages(messages, boundedTokenizer());
}

/**
 * Prompts up to this bound are quoted at the bound instead of being tokenized: the reservation
 * then holds at most this many input tokens' worth more than the estimate would, for a moment,
 * and the charge is the provider's count anyway. Tokenizing was a tenth of the CPU of a request.
 */
export const QUOTE_AT_BOUND_MAX_TOKENS = 16_384;

/**
 * The size of a prompt, measured as cheaply as each use allows: the byte bound where an upper
 * bound is enough (the worst-case quote, or a limit the bound is already under), the tokenizer's
 * estimate where it is not. Both are computed at most once.
 */
export class PromptSize {
  private readonly request: CanonicalRequest;
  private boundValue: number | undefined;
  private tokensValue: number | undefined;

  constructor(request: CanonicalRequest) {
    this.request = request;
  }

  /** Never below `tokens`. */
  get bound(): number {
    this.boundValue ??= measurePrompt(this.request, utf8Bytes);
    return this.boundValue;
  }

  /** The local tokenizer's estimate (estimatePromptTokens). */
  get tokens(): number {
    this.tokensValue ??= estimatePromptTokens(this.request);
    return this.tokensValue;
  }

  /** The prompt size a worst-case quote uses: never below the estimate. */
  get forQuote(): number {
    return this.bound <= QUOTE_AT_BOUND_MAX_TOKENS ? this.bound : this.tokens;
  }

  /** Whether the estimate is over `limit`, tokenizing only when the bound is over it. */
  exceeds(limit: number): boolean {
    return this.bound > limit && this.tokens > limit;
  }
}

function measurePrompt(request: CanonicalRequest, measure: TextMeasure): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const block of request.system) tokens += MESSAGE_OVERHEAD_TOKENS + measure(block.text);
  tokens += measureMessages(request.messages, measure);
  for (const tool of request.tools ?? []) {
    tokens += measure(tool.name) + measure(tool.description ?? '');
    if (tool.parameters) tokens += measure(JSON.stringify(tool.parameters));
  }
  if (request.responseFormat?.kind === 'json_schema') tokens += measure(JSON.stringify(request.responseFormat.schema));
  return tokens;
}

function measureMessages(messages: readonly Message[], measure: TextMeasure): number {
  let tokens = 0;
  for (const message of messages) {
    tokens += MESSAGE_OVERHEAD_TOKENS;
    for (const part of message.content) tokens += measurePart(part, measure);
  }
  return tokens;
}

function measurePart(part: ContentPart, measure: TextMeasure): number {
  switch (part.type) {
    case 'text':
      return measure(part.text);
    case 'image':
      return IMAGE_TOKEN_ESTIMATE;
    case 'document':
      return part.mediaType === 'text/plain' ? measure(part.data) : DOCUMENT_TOKEN_ESTIMATE;
    case 'tool_call':
      return measure(part.name) + measure(part.arguments);
    case 'tool_result': {
      let tokens = 0;
      for (const inner of part.content) tokens += measurePart(inner, measure);
      return tokens;
    }
    case 'reasoning':
      return measure(part.text);
    default: {
      const unreachable: never = part;
      return unreachable;
    }
  }
}
