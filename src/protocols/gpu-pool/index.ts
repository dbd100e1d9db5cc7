/**
 * The `gpu-pool` upstream protocol: a diffusion pool behind an OpenAI-like path
 * (`POST {base_url}/images/generations`), with steps, guidance, seed and negative prompt. An edit
 * sends its source image as a data URL in `image_url` (image-to-image); the family takes no mask,
 * no quality and no end-user id. Base64 is asked for; a URL answer is downloaded all the same.
 */
import type { CanonicalImageRequest, CanonicalImageResult, GeneratedImage } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { pixelSize, type ImageFamily } from '../../policy/image-family.ts';
import { parseImagesError } from '../openai-images/errors.ts';
import type { ImagesProtocol } from '../image-protocol.ts';
import { imageMediaType, imageOfDatum, LIFTED_IMAGE_MEMBERS } from '../image-output.ts';
import { postJson, type JsonCallOptions } from '../transport/json-call.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { GpuPoolResponseSchema, type GpuPoolRequestWire } from './wire.ts';

const checkImages = wireCheck(GpuPoolResponseSchema, 'an images response');

export const GPU_POOL_FAMILY: ImageFamily = { quality: 'rejected', editSize: true, mask: false, gpuPool: true, user: false };

export function gpuPoolBody(request: CanonicalImageRequest, endpoint: RouteEndpoint): GpuPoolRequestWire {
  const body: GpuPoolRequestWire = { model: endpoint.upstreamModel, prompt: request.prompt, n: request.n, response_format: 'base64' };
  const pixels = request.size === undefined ? undefined : pixelSize(request.size);
  if (pixels) {
    body.width = pixels.width;
    body.height = pixels.height;
  }
  const options = request.gpuPool;
  if (options?.numInferenceSteps !== undefined) body.steps = options.numInferenceSteps;
  if (options?.guidanceScale !== undefined) body.guidance_scale = options.guidanceScale;
  if (options?.seed !== undefined) body.seed = options.seed;
  if (options?.negativePrompt !== undefined) body.negative_prompt = options.negativePrompt;
  if (request.image) body.image_url = `data:${request.image.mediaType};base64,${Buffer.from(request.image.data).toString('base64')}`;
  return body;
}

export const gpuPoolProtocol: ImagesProtocol = {
  family: GPU_POOL_FAMILY,
  async complete(request, endpoint, context) {
    // The config requires a base_url of every provider but the simulated one (src/config/load.ts).
    const base = endpoint.provider.base_url!;
    const options: JsonCallOptions = {
      headers: context.apiKey === undefined ? {} : { authorization: `Bearer ${context.apiKey}` },
      timeouts: endpoint.timeouts,
      signal: context.signal,
      correlation: context,
      parseError: parseImagesError,
    };
    const answer = await postJson(`${base.replace(/\/+$/, '')}/images/generations`, gpuPoolBody(request, endpoint), options, LIFTED_IMAGE_MEMBERS);
    const wire = checkedBody(checkImages, answer.body);
    const images: GeneratedImage[] = [];
    for (const datum of wire.data) {
      const received = await imageOfDatum(datum, options, answer.lifted);
      images.push({ ...received, mediaType: imageMediaType(received.data) });
    }
    const result: CanonicalImageResult = { images, providerModel: endpoint.upstreamModel, filtered: 0 };
    return request.size === undefined || request.size === 'auto' ? result : { ...result, size: request.size };
  },
};
