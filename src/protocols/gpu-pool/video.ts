/**
 * Video on the `gpu-pool` provider kind, through its queue (fal's shape): `POST {base_url}/{model}`
 * with `Authorization: Key …` queues the generation; its status URL is polled until COMPLETED, then
 * its result URL is read for the file's link. The key goes only to the base URL's origin, never to
 * a file host the result links to.
 * @see https://docs.fal.ai/model-endpoints/queue
 */
import type { RouteEndpoint } from '../../catalog/types.ts';
import { GatewayError } from '../../core/errors.ts';
import type { CallContext } from '../protocol.ts';
import { getJson, postJson, type JsonCallOptions } from '../transport/json-call.ts';
import { deliverable, optionsFor, withAskedWait } from '../video-output.ts';
import type { VideoProtocol } from '../video-protocol.ts';
import { parseQueueError } from './errors.ts';
import { queueModelPath, queueVideoInput } from './video-request.ts';
import { parseQueueResult, parseQueueStatus, parseQueueSubmission, type QueueOperation } from './video-response.ts';

export const gpuPoolVideoProtocol: VideoProtocol = {
  optionGroup: 'gpu_pool',
  async start(call, endpoint, context) {
    const answer = await postJson(`${baseUrl(endpoint)}/${queueModelPath(endpoint.upstreamModel)}`, queueVideoInput(call), callOptions(endpoint, context));
    return parseQueueSubmission(answer.body);
  },
  async poll(operation, endpoint, context) {
    const { status_url: statusUrl, response_url: responseUrl } = operation as QueueOperation;
    const options = callOptions(endpoint, context);
    const origin = baseUrl(endpoint);
    const status = await getJson(statusUrl, optionsFor(statusUrl, options, origin));
    const state = parseQueueStatus(status.body);
    if (state.status !== 'completed') return withAskedWait(state, status.headers);
    let result: unknown;
    try {
      result = (await getJson(responseUrl, optionsFor(responseUrl, options, origin))).body;
    } catch (error) {
      // A client error on a completed run's result is its verdict (the input was refused); a
      // transient one is thrown, so that the job looks again.
      if (error instanceof GatewayError && !error.retryable) return { status: 'failed', error };
      throw error;
    }
    return deliverable(parseQueueResult(result), options, origin);
  },
};

/** The config requires a base_url of every provider but the simulated one (src/config/load.ts). */
function baseUrl(endpoint: RouteEndpoint): string {
  return endpoint.provider.base_url!.replace(/\/+$/, '');
}

function callOptions(endpoint: RouteEndpoint, context: CallContext): JsonCallOptions {
  return {
    headers: context.apiKey === undefined ? {} : { authorization: `Key ${context.apiKey}` },
    timeouts: endpoint.timeouts,
    signal: context.signal,
    correlation: context,
    parseError: parseQueueError,
  };
}
