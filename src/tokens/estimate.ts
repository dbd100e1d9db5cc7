/**
 * Pre-flight prompt size: what a request is likely to cost in input tokens before any provider has
 * counted it. Used for the credit quote, the context-window check and free token counting. It is
 * an estimate (providers tokenize differently); bills always come from the usage a provider reports.
 */
import type { CanonicalRequest, ContentPart, DocumentPart, ImagePart, Message } from '../canonical/index.ts';
import { PDF_MEDIA_TYPE, pdfSize, pdfTokenBound } from './document-tokens.ts';
import { type ImageDimensions, imageDimensions, type ImageFamily, imageTokenBound } from './image-tokens.ts';
import { countTextTokens } from './tokenizer.ts';

/**
 * Fixed estimate for a binary document that is not a PDF (no provider documents a rule for one);
 * plain text is tokenized and a PDF is bounded from its pages (./document-tokens.ts).
 */
export const DOCUMENT_TOKEN_ESTIMATE = 3000;

/** Framing overhead per message (role markers), as in OpenAI's published counting recipe. */
const MESSAGE_OVERHEAD_TOKENS = 3;
/** Every reply is primed with an assistant header. */
const REPLY_PRIMING_TOKENS = 3;

/** How many tokens a piece of text counts for. */
type TextMeasure = (text: string) => number;
/** A part counted by its provider family's documented rule: an image, or a PDF. */
type MediaPart = ImagePart | DocumentPart;
/** How many tokens an image or a PDF counts for. */
type MediaMeasure = (part: MediaPart) => number;

/** Each image's dimensions, read from its header once however often its prompt is measured. */
const dimensionsOf = new WeakMap<ImagePart, ImageDimensions | undefined>();

function dimensions(image: ImagePart): ImageDimensions | undefined {
  if (!dimensionsOf.has(image)) dimensionsOf.set(image, imageDimensions(image.source));
  return dimensionsOf.get(image);
}

/** The bound of an image or a PDF on a route of `family` (undefined: every family's). */
function mediaTokenBound(family: ImageFamily | undefined, part: MediaPart): number {
  return part.type === 'image' ? imageTokenBound(family, dimensions(part)) : pdfTokenBound(family, pdfSize(part));
}

/** Images and PDFs at the bound of every provider family: what an estimate that knows no route counts. */
const anyFamilyMedia: MediaMeasure = (part) => mediaTokenBound(undefined, part);
/** Images and PDFs left out: measured apart, per family, by PromptSize.forQuote. */
const noMedia: MediaMeasure = () => 0;

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
  return measurePrompt(request, boundedTokenizer(), anyFamilyMedia);
}

export function estimateMessagesTokens(messages: readonly Message[]): number {
  return measureMessages(messages, boundedTokenizer(), anyFamilyMedia);
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
 * estimate where it is not. Both are computed at most once. Images and PDFs count at the bound of
 * every provider family, except in the quote of one route, which takes its family's
 * (./image-tokens.ts, ./document-tokens.ts).
 */
export class PromptSize {
  readonly #request: CanonicalRequest;
  #textBound: number | undefined;
  #textTokens: number | undefined;
  #media: readonly MediaPart[] | undefined;

  constructor(request: CanonicalRequest) {
    this.#request = request;
  }

  /** Never below `tokens`. */
  get bound(): number {
    return this.#boundOfText() + this.#mediaTokens(undefined);
  }

  /** The local tokenizer's estimate (estimatePromptTokens). */
  get tokens(): number {
    return this.#tokensOfText() + this.#mediaTokens(undefined);
  }

  /** The prompt size a worst-case quote on a route of `family` uses: never below what that family can count. */
  forQuote(family: ImageFamily | undefined): number {
    const media = this.#mediaTokens(family);
    const text = this.#boundOfText() + media <= QUOTE_AT_BOUND_MAX_TOKENS ? this.#boundOfText() : this.#tokensOfText();
    return text + media;
  }

  /** Whether the estimate is over `limit`, tokenizing only when the bound is over it. */
  exceeds(limit: number): boolean {
    return this.bound > limit && this.tokens > limit;
  }

  #boundOfText(): number {
    this.#textBound ??= measurePrompt(this.#request, utf8Bytes, noMedia);
    return this.#textBound;
  }

  #tokensOfText(): number {
    this.#textTokens ??= measurePrompt(this.#request, boundedTokenizer(), noMedia);
    return this.#textTokens;
  }

  #mediaTokens(family: ImageFamily | undefined): number {
    this.#media ??= mediaOf(this.#request.messages);
    let tokens = 0;
    for (const part of this.#media) tokens += mediaTokenBound(family, part);
    return tokens;
  }
}

function isPdf(part: DocumentPart): boolean {
  return part.mediaType === PDF_MEDIA_TYPE;
}

function mediaOf(messages: readonly Message[]): MediaPart[] {
  const media: MediaPart[] = [];
  const collect = (part: ContentPart) => {
    if (part.type === 'image' || (part.type === 'document' && isPdf(part))) media.push(part);
    else if (part.type === 'tool_result') part.content.forEach(collect);
  };
  for (const message of messages) message.content.forEach(collect);
  return media;
}

function measurePrompt(request: CanonicalRequest, measure: TextMeasure, media: MediaMeasure): number {
  let tokens = REPLY_PRIMING_TOKENS;
  for (const block of request.system) tokens += MESSAGE_OVERHEAD_TOKENS + measure(block.text);
  tokens += measureMessages(request.messages, measure, media);
  for (const tool of request.tools ?? []) {
    tokens += measure(tool.name) + measure(tool.description ?? '');
    if (tool.parameters) tokens += measure(JSON.stringify(tool.parameters));
  }
  if (request.responseFormat?.kind === 'json_schema') tokens += measure(JSON.stringify(request.responseFormat.schema));
  return tokens;
}

function measureMessages(messages: readonly Message[], measure: TextMeasure, media: MediaMeasure): number {
  let tokens = 0;
  for (const message of messages) {
    tokens += MESSAGE_OVERHEAD_TOKENS;
    for (const part of message.content) tokens += measurePart(part, measure, media);
  }
  return tokens;
}

function measurePart(part: ContentPart, measure: TextMeasure, media: MediaMeasure): number {
  switch (part.type) {
    case 'text':
      return measure(part.text);
    case 'image':
      return media(part);
    case 'document':
      if (part.mediaType === 'text/plain') return measure(part.data);
      return isPdf(part) ? media(part) : DOCUMENT_TOKEN_ESTIMATE;
    case 'tool_call':
      return measure(part.name) + measure(part.arguments);
    case 'tool_result': {
      let tokens = 0;
      for (const inner of part.content) tokens += measurePart(inner, measure, media);
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
