/**
 * Pre-flight prompt size: what a request is likely to cost in input tokens before any provider has
 * counted it. Used for the credit quote, the context-window check and free token counting. It is
 * an estimate (providers tokenize differently); bills always come from the usage a provider reports.
 */
import type { CanonicalRequest, ContentPart, ImagePart, Message } from '../canonical/index.ts';
import { type ImageDimensions, imageDimensions, type ImageFamily, imageTokenBound } from './image-tokens.ts';
import { countTextTokens } from './tokenizer.ts';

/** Fixed per-document estimate for binary documents (a few PDF pages); plain text is tokenized. */
export const DOCUMENT_TOKEN_ESTIMATE = 3000;

/** Framing overhead per message (role markers), as in OpenAI's published counting recipe. */
const MESSAGE_OVERHEAD_TOKENS = 3;
/** Every reply is primed with an assistant header. */
const REPLY_PRIMING_TOKENS = 3;

/** How many tokens a piece of text counts for. */
type TextMeasure = (text: string) => number;
/** How many tokens an image counts for. */
type ImageMeasure = (image: ImagePart) => number;

/** Each image's dimensions, read from its header once however often its prompt is measured. */
const dimensionsOf = new WeakMap<ImagePart, ImageDimensions | undefined>();

function dimensions(image: ImagePart): ImageDimensions | undefined {
  if (!dimensionsOf.has(image)) dimensionsOf.set(image, imageDimensions(image.source));
  return dimensionsOf.get(image);
}

/** An image at the bound of every provider family (./image-tokens.ts): what an estimate that knows no route counts. */
const anyFamilyImage: ImageMeasure = (image) => imageTokenBound(undefined, dimensions(image));
/** Images left out: measured apart, per family, by PromptSize.forQuote. */
const noImage: ImageMeasure = () => 0;

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
  return measurePrompt(request, boundedTokenizer(), anyFamilyImage);
}

export function estimateMessagesTokens(messages: readonly Message[]): number {
  return measureMessages(messages, boundedTokenizer(), anyFamilyImage);
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
 * estimate where it is not. Both are computed at most once. Images count at the bound of every
 * provider family, except in the quote of one route, which takes its family's
 * (./image-tokens.ts).
 */
export class PromptSize {
  readonly #request: CanonicalRequest;
  #textBound: number | undefined;
  #textTokens: number | undefined;
  #images: readonly ImagePart[] | undefined;

  constructor(request: CanonicalRequest) {
    this.#request = request;
  }

  /** Never below `tokens`. */
  get bound(): number {
    return this.#boundOfText() + this.#imageTokens(undefined);
  }

  /** The local tokenizer's estimate (estimatePromptTokens). */
  get tokens(): number {
    return this.#tokensOfText() + this.#imageTokens(undefined);
  }

  /** The prompt size a worst-case quote on a route of `family` uses: never below what that family can count. */
  forQuote(family: ImageFamily | undefined): number {
    const images = this.#imageTokens(family);
    const text = this.#boundOfText() + images <= QUOTE_AT_BOUND_MAX_TOKENS ? this.#boundOfText() : this.#tokensOfText();
    return text + images;
  }

  /** Whether the estimate is over `limit`, tokenizing only when the bound is over it. */
  exceeds(limit: number): boolean {
    return this.bound > limit && this.tokens > limit;
  }

  #boundOfText(): number {
    this.#textBound ??= measurePrompt(this.#request, utf8Bytes, noImage);
    return this.#textBound;
  }

  #tokensOfText(): number {
    this.#textTokens ??= measurePrompt(this.#request, boundedTokenizer(), noImage);
    return this.#textTokens;
  }

  #imageTokens(family: ImageFamily | undefined): number {
    this.#images ??= imagesOf(this.#request.messages);
    let tokens = 0;
    for (const image of this.#images) tokens += imageTokenBound(family, dimensions(image));
    return tokens;
  }
}

function imagesOf(messages: readonly Message[]): ImagePart[] {
  const images: ImagePart[] = [];
  const collect = (part: ContentPart) => {
    if (part.type === 'image') images.push(part);
    else if (part.type === 'tool_result') part.content.forEach(collect);
  };
  for (const message of messages) message.content.forEach(collect);
  return images;
}

function measurePrompt(request: CanonicalRequest, measure: TextMeasure, image: ImageMeasure): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const block of request.system) tokens += MESSAGE_OVERHEAD_TOKENS + measure(block.text);
  tokens += measureMessages(request.messages, measure, image);
  for (const tool of request.tools ?? []) {
    tokens += measure(tool.name) + measure(tool.description ?? '');
    if (tool.parameters) tokens += measure(JSON.stringify(tool.parameters));
  }
  if (request.responseFormat?.kind === 'json_schema') tokens += measure(JSON.stringify(request.responseFormat.schema));
  return tokens;
}

function measureMessages(messages: readonly Message[], measure: TextMeasure, image: ImageMeasure): number {
  let tokens = 0;
  for (const message of messages) {
    tokens += MESSAGE_OVERHEAD_TOKENS;
    for (const part of message.content) tokens += measurePart(part, measure, image);
  }
  return tokens;
}

function measurePart(part: ContentPart, measure: TextMeasure, image: ImageMeasure): number {
  switch (part.type) {
    case 'text':
      return measure(part.text);
    case 'image':
      return image(part);
    case 'document':
      return part.mediaType === 'text/plain' ? measure(part.data) : DOCUMENT_TOKEN_ESTIMATE;
    case 'tool_call':
      return measure(part.name) + measure(part.arguments);
    case 'tool_result': {
      let tokens = 0;
      for (const inner of part.content) tokens += measurePart(inner, measure, image);
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
