/** Builders and checks shared by the video protocol tests. */
import assert from 'node:assert/strict';
import type { CanonicalVideoRequest, OperationState, UpstreamVideo, VideoOperation } from '../../src/canonical/index.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import { GatewayError, type ErrorCode } from '../../src/core/errors.ts';
import type { CallContext } from '../../src/protocols/protocol.ts';
import type { VideoCall, VideoProtocol } from '../../src/protocols/video-protocol.ts';

/** A call for `prompt` of `seconds`; `fields` override the request's other fields. */
export function videoCall(prompt: string, seconds = 4, fields: Partial<CanonicalVideoRequest> = {}, variantMeta?: VideoCall['variantMeta']): VideoCall {
  const request: CanonicalVideoRequest = { model: 'gateway/video', fallbackModels: [], stream: false, prompt, ...fields };
  return variantMeta === undefined ? { request, durationSeconds: seconds } : { request, durationSeconds: seconds, variantMeta };
}

/** Looks at an operation until it ends, at most `maxLooks` times (no waiting: the simulators count looks, not time). */
export async function pollToEnd(
  protocol: VideoProtocol,
  operation: VideoOperation,
  endpoint: RouteEndpoint,
  context: CallContext,
  maxLooks = 10,
): Promise<OperationState> {
  for (let look = 0; look < maxLooks; look++) {
    const state = await protocol.poll(operation, endpoint, context);
    if (state.status !== 'running') return state;
  }
  throw new Error(`still running after ${maxLooks} looks`);
}

/** Every byte of a finished video. */
export async function videoContent(video: UpstreamVideo): Promise<Buffer> {
  const content = await video.fetch();
  if (content instanceof Uint8Array) return Buffer.from(content);
  const chunks: Uint8Array[] = [];
  for await (const chunk of content) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Matches a GatewayError with this code, retryable or not as told. */
export function gatewayError(code: ErrorCode, retryable: boolean, message?: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof GatewayError, `expected a GatewayError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.equal(error.retryable, retryable, error.message);
    if (message) assert.match(error.message, message);
    return true;
  };
}

/** The state's video, asserting it succeeded. */
export function succeededVideo(state: OperationState): UpstreamVideo {
  assert.equal(state.status, 'succeeded', JSON.stringify(state));
  return (state as Extract<OperationState, { status: 'succeeded' }>).video;
}

/** The state's error, asserting it failed. */
export function failedError(state: OperationState): GatewayError {
  assert.equal(state.status, 'failed', JSON.stringify(state));
  return (state as Extract<OperationState, { status: 'failed' }>).error;
}
