/**
 * What bounds the input tokens of a PDF: how many pages it has and how many bytes of text it can
 * hold, read from its bytes in bounded time and memory (docs/security.md, "Limits").
 *
 * - Pages: every page object (`/Type /Page`, not `/Pages`) in the file, including those packed in
 *   compressed object streams (`/Type /ObjStm`). Objects left behind by incremental updates and the
 *   same words inside any stream's bytes count too: the count can only be above the real one.
 * - Text: extracted text comes from content streams and strings in objects, and every byte of
 *   extracted text needs at least one byte there. So the text bound is the file's bytes outside
 *   streams, plus the decoded size of every stream that can carry text. Images, embedded fonts,
 *   cross-reference and metadata streams carry none and are not decoded; which is which is taken
 *   from each stream's own dictionary, so a file that labels its page content as an image has that
 *   text left out of the bound (what a provider then counts past the hold is capped and recorded,
 *   docs/billing.md, "Money caps").
 *
 * Only FlateDecode is inflated, synchronously and with an output cap of what is left of
 * MAX_PDF_INFLATED_BYTES, so a compressed bomb stops at the cap. A stream that could carry text
 * under any other expanding filter (LZW, RunLength, a chain) cannot be bounded and is refused.
 */
import { constants, inflateSync } from 'node:zlib';

export interface PdfSize {
  readonly pages: number;
  /** An upper bound of the bytes of text a provider can extract from it. */
  readonly textBytes: number;
}

/** Why a PDF cannot be measured; the dialects answer it with a 400 naming the field. */
export class PdfRefused extends Error {
  override readonly name = 'PdfRefused';
}

/** All the streams of one PDF inflate to at most this many bytes together. */
export const MAX_PDF_INFLATED_BYTES = 16 * 1024 * 1024;

const HEADER = '%PDF-';
/** A page object's type, not the page tree's `/Pages` (PDF 32000-1:2008, 7.7.3.3). */
const PAGE_TYPE = /\/Type\s*\/Page(?![A-Za-z0-9])/g;
const STREAM_START = /\bstream(?:\r\n|\n|\r)/g;
/** Streams no text is extracted from: images, embedded font programs, cross-reference tables, XMP metadata, attachments. */
const TEXTLESS = /\/Subtype\s*\/(?:Image|Type1C|CIDFontType0C|OpenType)\b|\/Length[123]\b|\/Type\s*\/(?:XRef|Metadata|EmbeddedFile)\b/;
const OBJECT_STREAM = /\/Type\s*\/ObjStm\b/;
/** Filters whose output is never larger than their input. */
const SHRINKING_FILTERS = new Set(['ASCIIHexDecode', 'ASCII85Decode', 'AHx', 'A85']);

/** Measures a PDF (its decoded bytes); throws PdfRefused when it is not one or cannot be bounded. */
export function measurePdf(bytes: Uint8Array): PdfSize {
  // latin1 maps each byte to one character, so string offsets are byte offsets.
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (!text.slice(0, 1024).includes(HEADER)) throw new PdfRefused('it is not a PDF (no %PDF- header)');
  let budget = MAX_PDF_INFLATED_BYTES;
  // The whole file is scanned, stream data included, so no object hides from the count behind a
  // misleading `stream` keyword; compressed object streams are scanned once inflated.
  let pages = count(text);
  let textBytes = 0;
  let outside = 0;
  let objectStart = 0;
  for (const match of text.matchAll(STREAM_START)) {
    const dataStart = match.index + match[0].length;
    if (dataStart <= objectStart) continue;
    const dictionaryStart = text.lastIndexOf('obj', match.index);
    const dictionary = text.slice(Math.max(dictionaryStart, objectStart), match.index);
    const dataEnd = streamEnd(text, dictionary, dataStart);
    outside += dataStart - objectStart;
    objectStart = dataEnd;
    const objectStream = OBJECT_STREAM.test(dictionary);
    if (!objectStream && TEXTLESS.test(dictionary)) continue;
    const data = bytes.subarray(dataStart, dataEnd);
    const decoded = decode(dictionary, data, budget);
    budget -= decoded.inflated;
    textBytes += decoded.size;
    if (objectStream) pages += count(decoded.text ?? '');
  }
  outside += text.length - objectStart;
  if (pages === 0) throw new PdfRefused('it has no page');
  return { pages, textBytes: textBytes + outside };
}

/** Where a stream's data ends: at its direct `/Length` when `endstream` follows it, else at the next `endstream`. */
function streamEnd(text: string, dictionary: string, dataStart: number): number {
  const length = /\/Length\s+(\d+)(?![\d\s]*R)/.exec(dictionary);
  if (length) {
    const end = dataStart + Number(length[1]);
    if (/^\s*endstream/.test(text.slice(end, end + 32))) return end;
  }
  const end = text.indexOf('endstream', dataStart);
  if (end < 0) throw new PdfRefused('a stream has no end');
  return end;
}

function count(text: string): number {
  return text.match(PAGE_TYPE)?.length ?? 0;
}

interface Decoded {
  /** An upper bound of the decoded size. */
  readonly size: number;
  /** Bytes inflated (counted against the budget). */
  readonly inflated: number;
  /** The decoded text, when it was decoded. */
  readonly text?: string;
}

function decode(dictionary: string, data: Uint8Array, budget: number): Decoded {
  const filters = filtersOf(dictionary);
  if (filters.length === 0 || filters.every((filter) => SHRINKING_FILTERS.has(filter))) return { size: data.length, inflated: 0 };
  if (filters.length !== 1 || (filters[0] !== 'FlateDecode' && filters[0] !== 'Fl'))
    throw new PdfRefused(`a stream's filters (${filters.join(', ')}) cannot be bounded`);
  let inflated: Buffer;
  try {
    // A stream cut short (no checksum, as some producers write them) yields what it holds, as a provider reads it.
    inflated = inflateSync(data, { maxOutputLength: Math.max(1, budget), finishFlush: constants.Z_SYNC_FLUSH });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PdfRefused(`its streams inflate to more than ${MAX_PDF_INFLATED_BYTES} bytes`);
    throw new PdfRefused('a FlateDecode stream is not valid zlib data');
  }
  return { size: inflated.length, inflated: inflated.length, text: inflated.toString('latin1') };
}

/** The names of a stream's `/Filter` entry: one name or an array of names. */
function filtersOf(dictionary: string): string[] {
  const filter = /\/Filter\s*(\[[^\]]*\]|\/[A-Za-z0-9]+)/.exec(dictionary);
  if (!filter) return [];
  return [...filter[1].matchAll(/\/([A-Za-z0-9]+)/g)].map((name) => name[1]);
}
