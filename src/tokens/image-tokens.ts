/**
 * The most input tokens one image in a prompt can count for, from its real dimensions and each
 * provider family's documented formula, plus a margin. A credit hold must be a true upper bound of
 * what a request can cost (docs/billing.md, "Money caps"), so an image is never a fixed guess:
 *
 * - OpenAI (https://platform.openai.com/docs/guides/images-vision#calculating-costs): tile models
 *   fit the image in 2048×2048, scale its shortest side to 768 and count 170 tokens per 512-pixel
 *   tile plus 85; patch models count 32-pixel patches (at most 1,536) times a model multiplier, of
 *   which 2.46 (gpt-4.1-nano) is the largest documented. The larger of the two is taken: the route
 *   does not say which kind of model it is.
 * - Anthropic (https://docs.anthropic.com/en/docs/build-with-claude/vision#calculate-image-costs):
 *   width × height / 750, after an image whose long edge is above 1,568 pixels is scaled down to it.
 * - Gemini (https://ai.google.dev/gemini-api/docs/tokens#multimodal-tokens): 258 tokens for an
 *   image of at most 384 pixels a side, else 258 per 768-pixel tile; models with a media
 *   resolution count up to 1,120 per image at the highest
 *   (https://ai.google.dev/gemini-api/docs/media-resolution), so never less than that.
 *
 * Any other provider (the simulator, a GPU pool) takes the largest of the three. An image given by
 * URL is not fetched: its dimensions are taken as UNKNOWN_IMAGE_SIDE a side.
 */
import { imageSize } from 'image-size';
import type { ImageSource } from '../canonical/index.ts';
import { ownBytes } from '../core/bytes.ts';

export type ImageFamily = 'openai' | 'anthropic' | 'gemini';

export interface ImageDimensions {
  readonly width: number;
  readonly height: number;
}

/** What an image of unknown dimensions (a URL) is assumed to measure a side: the largest the image endpoints take. */
export const UNKNOWN_IMAGE_SIDE = 8192;

/** The margin on every formula (+10%): providers round and resize in ways their documents do not spell out. */
const MARGIN = { numerator: 11, denominator: 10 } as const;

/** The dimensions of an inline image, read from its header; undefined for a URL or bytes that are no image. */
export function imageDimensions(source: ImageSource): ImageDimensions | undefined {
  if (source.kind !== 'base64') return undefined;
  // Exactly the decoded bytes: the header parser reads through the whole buffer it is given (docs/security.md, "Safe buffers").
  const bytes = ownBytes(Buffer.from(source.data, 'base64'));
  try {
    const { width, height } = imageSize(bytes);
    return width && height ? { width, height } : undefined;
  } catch {
    return undefined;
  }
}

/** The bound of one image for a provider family (undefined: any family). */
export function imageTokenBound(family: ImageFamily | undefined, dimensions: ImageDimensions | undefined): number {
  const size = dimensions ?? UNKNOWN_IMAGE;
  return withMargin(family === undefined ? Math.max(openAITokens(size), anthropicTokens(size), geminiTokens(size)) : imageTokens(family, size));
}

/** An image of unknown dimensions: the largest any provider rescales from. */
export const UNKNOWN_IMAGE: ImageDimensions = { width: UNKNOWN_IMAGE_SIDE, height: UNKNOWN_IMAGE_SIDE };

/** A family's documented formula, without the margin. */
export function imageTokens(family: ImageFamily, size: ImageDimensions): number {
  return FORMULAS[family](size);
}

/** `tokens` plus the margin every bound carries, rounded up. */
export function withMargin(tokens: number): number {
  return Math.ceil((tokens * MARGIN.numerator) / MARGIN.denominator);
}

const FORMULAS: Readonly<Record<ImageFamily, (size: ImageDimensions) => number>> = {
  openai: openAITokens,
  anthropic: anthropicTokens,
  gemini: geminiTokens,
};

const OPENAI_TILE_TOKENS = 170;
const OPENAI_BASE_TOKENS = 85;
const OPENAI_MAX_PATCHES = 1536;
const OPENAI_LARGEST_PATCH_MULTIPLIER = 2.46;

function openAITokens({ width, height }: ImageDimensions): number {
  // Tiles: fit in 2048×2048, then the shortest side to 768.
  const fit = Math.min(1, 2048 / Math.max(width, height));
  const shortest = Math.min(width, height) * fit;
  const scale = fit * (768 / shortest);
  const tiles = Math.ceil((width * scale) / 512) * Math.ceil((height * scale) / 512);
  const tileTokens = tiles * OPENAI_TILE_TOKENS + OPENAI_BASE_TOKENS;
  const patches = Math.min(OPENAI_MAX_PATCHES, Math.ceil(width / 32) * Math.ceil(height / 32));
  return Math.max(tileTokens, Math.ceil(patches * OPENAI_LARGEST_PATCH_MULTIPLIER));
}

const ANTHROPIC_MAX_EDGE = 1568;

function anthropicTokens({ width, height }: ImageDimensions): number {
  const scale = Math.min(1, ANTHROPIC_MAX_EDGE / Math.max(width, height));
  return Math.ceil((width * scale * (height * scale)) / 750);
}

const GEMINI_TILE_TOKENS = 258;
const GEMINI_HIGHEST_MEDIA_RESOLUTION_TOKENS = 1120;

function geminiTokens({ width, height }: ImageDimensions): number {
  const tiles = width <= 384 && height <= 384 ? 1 : Math.ceil(width / 768) * Math.ceil(height / 768);
  return Math.max(tiles * GEMINI_TILE_TOKENS, GEMINI_HIGHEST_MEDIA_RESOLUTION_TOKENS);
}
