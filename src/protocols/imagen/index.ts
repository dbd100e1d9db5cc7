/**
 * Imagen on the `gemini` provider kind: `POST {base_url}/v1beta/models/{model}:predict` with
 * `x-goog-api-key`. Its family has no quality and no end-user id, takes sizes as aspect ratios, and
 * keeps an edit's source shape (an explicit size on an edit is refused).
 */
import type { ImageFamily } from '../../policy/image-family.ts';
import { parseGeminiError } from '../gemini/errors.ts';
import type { ImagesProtocol } from '../image-protocol.ts';
import { postJson } from '../transport/json-call.ts';
import { IMAGEN_ASPECT_RATIOS, imagenBody } from './request.ts';
import { parseImagenResponse } from './response.ts';

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

export const IMAGEN_FAMILY: ImageFamily = { quality: 'rejected', editSize: false, mask: true, gpuPool: false, user: false, aspectRatios: IMAGEN_ASPECT_RATIOS };

export const imagenProtocol: ImagesProtocol = {
  family: IMAGEN_FAMILY,
  async complete(request, endpoint, context) {
    const base = (endpoint.provider.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    // Model names are written either bare or as the API's resource name (`models/…`).
    const model = encodeURIComponent(endpoint.upstreamModel.replace(/^models\//, ''));
    const answer = await postJson(`${base}/v1beta/models/${model}:predict`, imagenBody(request), {
      headers: context.apiKey === undefined ? {} : { 'x-goog-api-key': context.apiKey },
      timeouts: endpoint.timeouts,
      signal: context.signal,
      correlation: context,
      parseError: parseGeminiError,
    });
    return parseImagenResponse(answer.body, endpoint.upstreamModel, request.size);
  },
};
