/**
 * The image result in the OpenAI Images shape (https://platform.openai.com/docs/api-reference/images/object):
 * `created` (seconds), `data[]` with a signed `url` or `b64_json`, `revised_prompt` where the upstream gave one,
 * and `usage` where the upstream counted tokens.
 */
import type { CanonicalImageRequest, CanonicalImageResult, ImageTokenUsage } from '../../canonical/index.ts';
import type { ServedCall } from '../../pipeline/types.ts';

export interface ImageResultBody {
  readonly created: number;
  readonly data: readonly ImageDatum[];
  readonly usage?: OpenAIImageUsage;
}

interface ImageDatum {
  readonly b64_json?: string;
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
      ...(urls ? { url: urls[index] } : { b64_json: Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength).toString('base64') }),
      ...(image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt }),
    })),
    ...(result.usage ? { usage: openAIUsage(result.usage) } : {}),
  };
}

function openAIUsage(usage: ImageTokenUsage): OpenAIImageUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { text_tokens: usage.inputTextTokens ?? 0, image_tokens: usage.inputImageTokens ?? 0 },
    output_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
  };
}
