/**
 * Background responses (`background: true`; docs/responses.md, "Background responses"): the
 * Response objects of a response run as a job, from `queued` to its end. The job machinery itself
 * (queue, workers, leases, cancel, holds) is the same for every kind of job (src/jobs/).
 */
import type { GatewayError } from '../../core/errors.ts';
import type { JobRecord } from '../../jobs/jobs.ts';
import type { MeteredJobPresenter } from '../../jobs/metered-job.ts';
import { TEXT, type TextTypes } from '../../pipeline/kinds/text.ts';
import { decodeResponsesRequest } from './decode.ts';
import { encodeResponse, responseShell, type ResponseObject } from './encode.ts';
import type { ResponsesBody } from './schema.ts';

/** A background response's object: the synchronous one, marked as run in the background. */
type BackgroundResponse = ResponseObject & { background: true };

export const RESPONSE_JOBS: MeteredJobPresenter<TextTypes, BackgroundResponse> = {
  jobKind: 'response',
  output: TEXT,
  // The job keeps the client's body, so that a parameter an upstream refuses is named as the client wrote it.
  names: (context) => decodeResponsesRequest(context as ResponsesBody).names,
  queued: (prepared) => ({
    ...responseShell(prepared, { status: 'queued', error: null, incomplete_details: null }),
    background: true,
  }),
  render: (result, call, settlement) => ({ ...encodeResponse(result, call, settlement), background: true }),
  ended: (body) => (body.status === 'incomplete' || body.status === 'failed' ? body.status : 'completed'),
  failed: (job, error) => withStatus(job, { status: 'failed', error: { code: responseErrorCode(error), message: error.message }, incomplete_details: null }),
  cancelled: (job) => withStatus(job, { status: 'cancelled', error: null, incomplete_details: null }),
};

/** The job's stored object (at least the queued one) with another status. */
function withStatus(job: JobRecord, status: Pick<ResponseObject, 'status' | 'error' | 'incomplete_details'>): ResponseObject {
  return { ...(job.result as ResponseObject), ...status };
}

/**
 * The Response object's `error.code`: the gateway's own code (docs/errors.md), with the internal
 * failure spelt as OpenAI spells it for a response.
 * @see https://platform.openai.com/docs/api-reference/responses/object
 */
function responseErrorCode(error: GatewayError): string {
  return error.code === null || error.code === 'internal_error' ? 'server_error' : error.code;
}

/** The object a client polls: the stored one, with the live status of a job still waiting or running. */
export function polledResponse(job: JobRecord): ResponseObject {
  const stored = job.result as ResponseObject;
  return job.status === 'queued' || job.status === 'in_progress' ? { ...stored, status: job.status } : stored;
}
