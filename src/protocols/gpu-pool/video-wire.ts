/**
 * A GPU pool's queue API for video (fal's shape): the model's input is posted to
 * `{base_url}/{model}`, the answer names the request's status and result URLs, the status goes
 * IN_QUEUE → IN_PROGRESS → COMPLETED, and the result links to the file.
 * @see https://docs.fal.ai/model-endpoints/queue
 */
import { Type } from '@sinclair/typebox';
import { Maybe, Partial } from '../wire-schema.ts';

export interface QueueVideoInputWire {
  prompt: string;
  /** Seconds. */
  duration: number;
  negative_prompt?: string;
  seed?: number;
  num_inference_steps?: number;
  fps?: number;
  num_frames?: number;
  width?: number;
  height?: number;
}

// ---- answers: checked against these deliberately partial schemas (../wire-schema.ts) ----

const Text = Maybe(Type.String());

export const QueueSubmissionSchema = Partial({ request_id: Text, status_url: Text, response_url: Text });

export const QueueStatusSchema = Partial({
  status: Text,
  /** A run that failed: its status is COMPLETED, with the error beside it (a message or validation failures). */
  error: Type.Optional(Type.Unknown()),
  error_type: Text,
});

export const QueueVideoResultSchema = Partial({
  video: Maybe(Partial({ url: Text, content_type: Text })),
  /** Seconds delivered: what is charged when the queue says it. */
  duration: Maybe(Type.Number({ exclusiveMinimum: 0 })),
  /** An error answer: a message, or validation failures (`[{loc, msg, type}]`). */
  detail: Type.Optional(Type.Unknown()),
});
