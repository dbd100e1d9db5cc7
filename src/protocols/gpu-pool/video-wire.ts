/**
 * A GPU pool's queue API for video (fal's shape): the model's input is posted to
 * `{base_url}/{model}`, the answer names the request's status and result URLs, the status goes
 * IN_QUEUE → IN_PROGRESS → COMPLETED, and the result links to the file.
 * @see https://docs.fal.ai/model-endpoints/queue
 */
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

export interface QueueSubmissionWire {
  readonly request_id?: string;
  readonly status_url?: string;
  readonly response_url?: string;
  readonly cancel_url?: string;
}

export interface QueueStatusWire {
  readonly status?: string;
  readonly queue_position?: number;
  /** A run that failed: its status is COMPLETED, with the error beside it. */
  readonly error?: unknown;
  readonly error_type?: string;
}

export interface QueueVideoResultWire {
  readonly video?: { readonly url?: string; readonly content_type?: string; readonly file_size?: number };
  readonly seed?: number;
  readonly duration?: unknown;
  /** An error answer: a message, or validation failures (`[{loc, msg, type}]`). */
  readonly detail?: unknown;
}
