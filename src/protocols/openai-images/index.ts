/**
 * The `openai-images` upstream protocol: OpenAI Images generations (JSON) and edits (multipart,
 * with a mask). Its family takes the quality aliases and masks, and no `gpu_pool` options.
 */
import type { ImageFamily } from '../../policy/image-family.ts';
import { resolveImageQuality } from '../../policy/image-family.ts';
import type { ImagesProtocol } from '../image-protocol.ts';
import { encodeForm, LIFTED_IMAGE_MEMBERS } from '../image-output.ts';
import { OPENAI_ADDRESS } from '../openai-request-fields.ts';
import { postEncoded, postJson, type JsonCallOptions } from '../transport/json-call.ts';
import { parseImagesError } from './errors.ts';
import { imagesEditForm, imagesRequestBody } from './request.ts';
import { parseImagesResponse } from './response.ts';

export const OPENAI_IMAGE_FAMILY: ImageFamily = { quality: 'aliased', editSize: true, mask: true, gpuPool: false, user: true };

export const openAIImagesProtocol: ImagesProtocol = {
  family: OPENAI_IMAGE_FAMILY,
  async complete(request, endpoint, context) {
    const base = (endpoint.provider.base_url ?? OPENAI_ADDRESS.defaultBaseUrl).replace(/\/+$/, '');
    const options: JsonCallOptions = {
      headers: context.apiKey === undefined ? {} : OPENAI_ADDRESS.credentialHeaders(context.apiKey),
      timeouts: endpoint.timeouts,
      signal: context.signal,
      correlation: context,
      parseError: parseImagesError,
    };
    const quality = resolveImageQuality(OPENAI_IMAGE_FAMILY, request.quality, endpoint);
    const answer =
      request.operation === 'edit'
        ? await postEncoded(`${base}/images/edits`, await encodeForm(imagesEditForm(request, endpoint, quality)), options)
        : await postJson(`${base}/images/generations`, imagesRequestBody(request, endpoint, quality), options, LIFTED_IMAGE_MEMBERS);
    return parseImagesResponse(answer, { model: endpoint.upstreamModel, quality, size: request.size }, options);
  },
};
