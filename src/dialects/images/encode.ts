/**
 * The image result in the OpenAI Images shape (https://platform.openai.com/docs/api-reference/images/object):
 * `created` (seconds), `data[]` with a signed `url` or `b64_json`, `revised_prompt` where the upstream gave one,
 * and `usage` where the upstream counted tokens.
 */
import type { CanonicalImageRequest, CanonicalImageResult, ImageTokenUsage } from '../../canonical/index.ts';
import { JsonPieces, type JsonPiece } from '../../core/json-pieces.ts';
import type { ServedCall } from '../../pipeline/types.ts';

export interface ImageResultBody {
  readonly created: number;
  readonly data: readonly ImageDatum[];
  readonly usage?: OpenAIImageUsage;
}

interface ImageDatum {
  /** The base64 text, or its ASCII bytes as the upstream sent them (imageResultPieces sends either as it is). */
  readonly b64_json?: string | Uint8Array;
  readonly url?: string;
  readonly revised_prompt?: string;
}

interface OpenAIImageUsage {
  readonly input_tokens: number;
  readonly input_tokens_details: { readonly text_tokens: number; readonly image_tokens: number };
  readonly output_tokens: number;
  readonly total_tokens: number;
}

/** `urls`: the signed URL of each stored image (`response_format: url`); without them, the images inline. */
export function encodeImageResult(result: CanonicalImageResult, call: ServedCall<CanonicalImageRequest>, urls?: readonly string[]): ImageResultBody {
  return {
    created: Math.floor(call.createdAt / 1000),
    data: result.images.map((image, index) => ({
      ...(urls
        ? { url: urls[index] }
        : { b64_json: image.base64 ?? Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength).toString('base64') }),
      ...(image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt }),
    })),
    ...(result.usage ? { usage: openAIUsage(result.usage) } : {}),
  };
}

/**
 * The body's JSON as the pieces sent, together the same as `JSON.stringify(body)`, with each
 * `b64_json` sent as it is between two pieces of JSON text rather than passed through the
 * serializer or copied: a base64 text needs no escaping, and serializing a quarter of a megabyte of
 * it, encoding the string for the socket, or copying it into one buffer were each a pass over the
 * whole image (docs/performance.md, "Images at the cost of their bytes").
 */
export function imageResultPieces(body: ImageResultBody): JsonPieces {
  // Alternating: JSON text, then a base64 text (ASCII, or its bytes) between two pieces of JSON.
  const pieces: JsonPiece[] = [];
  let json = `{"created":${JSON.stringify(body.created)},"data":[`;
  body.data.forEach(({ b64_json, ...rest }, index) => {
    if (index > 0) json += ',';
    const others = JSON.stringify(rest);
    if (b64_json === undefined) {
      json += others;
      return;
    }
    pieces.push(`${json}{"b64_json":"`, b64_json);
    json = `"${others === '{}' ? '}' : `,${others.slice(1)}`}`;
  });
  pieces.push(`${json}]${body.usage === undefined ? '' : `,"usage":${JSON.stringify(body.usage)}`}}`);
  return new JsonPieces(pieces);
}

function openAIUsage(usage: ImageTokenUsage): OpenAIImageUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { text_tokens: usage.inputTextTokens ?? 0, image_tokens: usage.inputImageTokens ?? 0 },
    output_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
  };
}
