/**
 * The most input tokens one PDF in a prompt can count for, from its real page count and text
 * (./pdf-size.ts) and each provider family's documented rule, plus the margin images carry
 * (./image-tokens.ts). Every family is bounded as "an image of each page plus the text of the
 * file", the text at one token per byte at most:
 *
 * - Anthropic (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support): each page is
 *   converted to an image and its text extracted, and both are counted; a page image is at most an
 *   image scaled to the 1,568-pixel long edge (the vision formula).
 * - OpenAI (https://platform.openai.com/docs/guides/pdf-files): the extracted text and an image of
 *   each page; a page image counts at most what an image of unknown size can (the vision formula).
 * - Gemini (https://ai.google.dev/gemini-api/docs/document-processing): 258 tokens a page, up to
 *   1,120 at the highest media resolution (https://ai.google.dev/gemini-api/docs/media-resolution).
 *   Native text is counted as well, which only raises the bound.
 *
 * Any other provider takes the largest of the three.
 */
import type { DocumentPart } from '../canonical/index.ts';
import { type ImageFamily, imageTokens, UNKNOWN_IMAGE, withMargin } from './image-tokens.ts';
import { measurePdf, type PdfSize } from './pdf-size.ts';

export const PDF_MEDIA_TYPE = 'application/pdf';

/** The most one page's image can count for, per family (before the margin). */
const PAGE_IMAGE_TOKENS: Readonly<Record<ImageFamily, number>> = {
  openai: imageTokens('openai', UNKNOWN_IMAGE),
  anthropic: imageTokens('anthropic', UNKNOWN_IMAGE),
  gemini: 1120,
};

const LARGEST_PAGE_IMAGE_TOKENS = Math.max(...Object.values(PAGE_IMAGE_TOKENS));

/** Each document's size, read from its bytes once however often its prompt is measured. */
const sizeOf = new WeakMap<DocumentPart, PdfSize>();

/** The size of a PDF document part; throws PdfRefused when it cannot be measured. */
export function pdfSize(document: DocumentPart): PdfSize {
  let size = sizeOf.get(document);
  if (size === undefined) {
    size = measurePdf(Buffer.from(document.data, 'base64'));
    sizeOf.set(document, size);
  }
  return size;
}

/** The bound of one PDF for a provider family (undefined: any family). */
export function pdfTokenBound(family: ImageFamily | undefined, size: PdfSize): number {
  const page = family === undefined ? LARGEST_PAGE_IMAGE_TOKENS : PAGE_IMAGE_TOKENS[family];
  return withMargin(size.pages * page + size.textBytes);
}
