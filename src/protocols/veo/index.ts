/**
 * Veo on the `gemini` provider kind: `POST {base_url}/v1beta/models/{model}:predictLongRunning`
 * starts a generation, `GET {base_url}/v1beta/{operation name}` looks at it, both with
 * `x-goog-api-key`; the finished file is downloaded from the URI the operation gives.
 * @see https://ai.google.dev/gemini-api/docs/video
 */
import type { RouteEndpoint } from '../../catalog/types.ts';
import { parseGeminiError } from '../gemini/errors.ts';
import type { CallContext } from '../protocol.ts';
import { getJson, postJson, type JsonCallOptions } from '../transport/json-call.ts';
import { deliverable, withAskedWait } from '../video-output.ts';
import type { VideoProtocol } from '../video-protocol.ts';
import { veoBody } from './request.ts';
import { parseVeoOperation, veoOperationName } from './response.ts';

const DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

export const veoProtocol: VideoProtocol = {
  optionGroup: 'cloud_a',
  async start(call, endpoint, context) {
    // Model names are written either bare or as the API's resource name (`models/…`).
    const model = encodeURIComponent(endpoint.upstreamModel.replace(/^models\//, ''));
    const answer = await postJson(`${baseUrl(endpoint)}/v1beta/models/${model}:predictLongRunning`, veoBody(call), callOptions(endpoint, context));
    return { id: veoOperationName(answer.body) };
  },
  async poll(operation, endpoint, context) {
    const options = callOptions(endpoint, context);
    const answer = await getJson(`${baseUrl(endpoint)}/v1beta/${operation.id}`, options);
    return withAskedWait(deliverable(parseVeoOperation(answer.body), options, baseUrl(endpoint)), answer.headers);
  },
};

function baseUrl(endpoint: RouteEndpoint): string {
  return (endpoint.provider.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
}

function callOptions(endpoint: RouteEndpoint, context: CallContext): JsonCallOptions {
  return {
    headers: context.apiKey === undefined ? {} : { 'x-goog-api-key': context.apiKey },
    timeouts: endpoint.timeouts,
    signal: context.signal,
    correlation: context,
    parseError: parseGeminiError,
  };
}
