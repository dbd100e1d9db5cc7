/**
 * Veo operations → what one look at them tells. An operation is running until `done`; a done one
 * carries either an error (a `google.rpc.Status`, whose CANCELLED means the provider cancelled it)
 * or the generated samples, of which the gateway asks one. A response whose samples were all
 * withheld by Google's safety filters counts them in `raiMediaFilteredCount`: that is a failed
 * generation, not a fault to retry.
 */
import { errors, type GatewayError } from '../../core/errors.ts';
import { geminiStreamError } from '../gemini/errors.ts';
import { finished, inlineVideo, linkedVideo, type ParsedOperation } from '../video-output.ts';
import { checkedBody, wireCheck } from '../wire-schema.ts';
import { VeoOperationSchema, type VeoStatusWire } from './wire.ts';

const checkOperation = wireCheck(VeoOperationSchema, 'an operation');

/** The name `:predictLongRunning` answered, checked to be a relative resource path before it goes into poll URLs. */
export function veoOperationName(body: unknown): string {
  const name = checkedBody(checkOperation, body).name;
  if (name == null || !RESOURCE_PATH.test(name)) throw errors.malformedUpstream('an operation without a valid name');
  return name;
}

/** Segments of word characters, dots and dashes, none of them `.` or `..`. */
const RESOURCE_PATH = /^[\w-][\w.-]*(?:\/[\w-][\w.-]*)*$/;

export function parseVeoOperation(body: unknown): ParsedOperation {
  const operation = checkedBody(checkOperation, body);
  if (operation.done !== true) return { status: 'running' };
  if (operation.error != null) {
    return operation.error.code === GRPC_CANCELLED ? { status: 'cancelled' } : { status: 'failed', error: operationError(operation.error) };
  }
  const generated = operation.response?.generateVideoResponse;
  const video = generated?.generatedSamples?.[0]?.video;
  const encoding = video?.encoding ?? undefined;
  if (video?.uri != null) return finished(() => linkedVideo(video.uri, encoding));
  if (video?.encodedVideo != null) return finished(() => inlineVideo(video.encodedVideo, encoding));
  if ((generated?.raiMediaFilteredCount ?? 0) > 0) {
    const reasons = generated?.raiMediaFilteredReasons?.join(' ') ?? '';
    return { status: 'failed', error: errors.upstreamReported(`the video was withheld by its content filter${reasons === '' ? '' : ` (${reasons})`}`, false) };
  }
  return { status: 'failed', error: errors.malformedUpstream('a finished operation without a video') };
}

/** google.rpc.Code numbers, https://github.com/googleapis/googleapis/blob/master/google/rpc/code.proto */
const GRPC_CANCELLED = 1;
const GRPC_STATUS_NAMES: Readonly<Record<number, string>> = {
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  11: 'OUT_OF_RANGE',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  16: 'UNAUTHENTICATED',
};

/** The operation's error by the HTTP status its gRPC code stands for (any other: an internal error). */
function operationError(status: VeoStatusWire): GatewayError {
  return geminiStreamError({ status: GRPC_STATUS_NAMES[status.code ?? -1], message: status.message ?? undefined });
}
