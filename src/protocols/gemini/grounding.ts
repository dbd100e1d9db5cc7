/**
 * Grounding with Google Search → canonical web-search info and
 * citations.
 *
 * `billedQueries` is the number of queries the model executed: what per-query billing charges. An
 * endpoint billed per request is charged one unit for every successful search-enabled request
 * whatever this says; billing applies that rule (billing/search-units.ts), since it knows the
 * endpoint.
 * @see https://ai.google.dev/gemini-api/docs/google-search
 */
import type { Citation, WebSearchInfo } from '../../canonical/index.ts';
import type { GeminiGroundingMetadataWire } from './wire.ts';

export function geminiWebSearch(metadata: GeminiGroundingMetadataWire): WebSearchInfo {
  const queries = metadata.webSearchQueries ?? [];
  const html = metadata.searchEntryPoint?.renderedContent;
  return { queries, ...(html != null && { searchEntryPointHtml: html }), billedQueries: queries.length };
}

/**
 * One citation per (supported segment, source) pair, with the segment's position in the answer
 * text; sources no segment cites are listed without a position. Gemini measures segments in UTF-8
 * bytes, canonical positions are string indexes, so they are converted against the answer text.
 */
export function geminiCitations(metadata: GeminiGroundingMetadataWire, answer: string): Citation[] {
  const sources = (metadata.groundingChunks ?? []).map((chunk) => chunk.web);
  const citations: Citation[] = [];
  const cited = new Set<number>();
  for (const support of metadata.groundingSupports ?? []) {
    for (const chunkIndex of support.groundingChunkIndices ?? []) {
      const source = sources[chunkIndex];
      if (!source?.uri) continue;
      cited.add(chunkIndex);
      const segment = support.segment;
      citations.push({
        url: source.uri,
        ...(source.title != null && { title: source.title }),
        ...(segment?.startIndex != null || segment?.endIndex != null
          ? { startIndex: stringIndex(answer, segment.startIndex ?? 0), endIndex: stringIndex(answer, segment.endIndex ?? 0) }
          : {}),
      });
    }
  }
  sources.forEach((source, index) => {
    if (source?.uri && !cited.has(index)) citations.push({ url: source.uri, ...(source.title != null && { title: source.title }) });
  });
  return citations;
}

/** The string index at a UTF-8 byte offset of `text`. */
function stringIndex(text: string, byteOffset: number): number {
  let bytes = 0;
  let index = 0;
  for (const character of text) {
    if (bytes >= byteOffset) return index;
    bytes += Buffer.byteLength(character, 'utf8');
    index += character.length;
  }
  return index;
}
