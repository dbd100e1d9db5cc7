/**
 * A PDF document part that the gateway can bound: its pages and text are measured while the body
 * is decoded (tokens/pdf-size.ts), so a PDF that is no PDF, or one whose streams would inflate past
 * the limit (a compressed bomb), is a 400 naming its field before any credit moves, as an image
 * bomb is (docs/security.md, "Limits").
 */
import type { DocumentPart } from '../canonical/index.ts';
import { errors } from '../core/errors.ts';
import { PDF_MEDIA_TYPE, pdfSize } from '../tokens/document-tokens.ts';
import { PdfRefused } from '../tokens/pdf-size.ts';

/** `document` itself, once a PDF among them has been measured; throws a 400 on `param` otherwise. */
export function measuredDocument(document: DocumentPart, param: string): DocumentPart {
  if (document.mediaType !== PDF_MEDIA_TYPE) return document;
  try {
    pdfSize(document);
  } catch (error) {
    if (error instanceof PdfRefused) throw errors.invalidValue(param, `'${param}' is not a PDF the gateway can read (${error.message}).`);
    throw error;
  }
  return document;
}
