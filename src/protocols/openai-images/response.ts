/** OpenAI Images responses → the canonical image result (images as bytes, URLs downloaded). */
import type { CanonicalImageResult, GeneratedImage, ImageQuality, ImageTokenUsage } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { base64Image, downloadedImage, imageMediaType } from '../image-output.ts';
import type { JsonCallOptions } from '../transport/json-call.ts';
import type { ImagesResponseWire } from './wire.ts';

export async function parseImagesResponse(
  body: unknown,
  asked: { readonly model: string; readonly quality?: ImageQuality; readonly size?: string },
  download: JsonCallOptions,
): Promise<CanonicalImageResult> {
  const wire = body as ImagesResponseWire | null;
  if (!wire || !Array.isArray(wire.data)) throw errors.malformedUpstream('an images response without data');
  const images: GeneratedImage[] = [];
  for (const datum of wire.data) {
    const data = datum.b64_json !== undefined ? base64Image(datum.b64_json) : datum.url !== undefined ? await downloadedImage(datum.url, download) : undefined;
    if (!data) throw errors.malformedUpstream('an image with neither b64_json nor url');
    images.push({ data, mediaType: imageMediaType(data), ...(datum.revised_prompt === undefined ? {} : { revisedPrompt: datum.revised_prompt }) });
  }
  const size = asked.size !== undefined && asked.size !== 'auto' ? asked.size : wire.size;
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
    inputTextTokens: usage.input_tokens_details?.text_tokens,
    inputImageTokens: usage.input_tokens_details?.image_tokens,
    outputTokens: output,
    totalTokens: usage.total_tokens ?? input + output,
  };
}
