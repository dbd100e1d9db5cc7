/** OpenAI Images responses → the canonical image result (images as bytes, URLs downloaded). */
import type { CanonicalImageResult, GeneratedImage, ImageQuality, ImageTokenUsage } from '../../canonical/index.ts';
import { imageMediaType, imageOfDatum } from '../image-output.ts';
import type { JsonAnswer, JsonCallOptions } from '../transport/json-call.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { ImagesResponseSchema, type ImagesResponseWire } from './wire.ts';

const checkImages = wireCheck(ImagesResponseSchema, 'an images response');

export async function parseImagesResponse(
  answer: Pick<JsonAnswer, 'body' | 'lifted'>,
  asked: { readonly model: string; readonly quality?: ImageQuality; readonly size?: string },
  download: JsonCallOptions,
): Promise<CanonicalImageResult> {
  const wire = checkedBody(checkImages, answer.body);
  const images: GeneratedImage[] = [];
  for (const datum of wire.data) {
    const received = await imageOfDatum(datum, download, answer.lifted);
    images.push({ ...received, mediaType: imageMediaType(received.data), ...(datum.revised_prompt == null ? {} : { revisedPrompt: datum.revised_prompt }) });
  }
  const size = asked.size !== undefined && asked.size !== 'auto' ? asked.size : (wire.size ?? undefined);
  return {
    images,
    providerModel: asked.model,
    filtered: 0,
    ...(asked.quality === undefined ? {} : { quality: asked.quality }),
    ...(size === undefined || size === 'auto' ? {} : { size }),
    ...(wire.usage ? { usage: imageUsage(wire.usage) } : {}),
  };
}

function imageUsage(usage: NonNullable<ImagesResponseWire['usage']>): ImageTokenUsage {
  const input = usage.input_tokens ?? 0;
  const output = usage.output_tokens ?? 0;
  return {
    inputTokens: input,
    inputTextTokens: usage.input_tokens_details?.text_tokens ?? undefined,
    inputImageTokens: usage.input_tokens_details?.image_tokens ?? undefined,
    outputTokens: output,
    totalTokens: usage.total_tokens ?? input + output,
  };
}
