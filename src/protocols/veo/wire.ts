/**
 * Veo on the Gemini API: `:predictLongRunning` starts a generation and answers a long-running
 * operation, which is then read by its name until `done`. A finished operation's file is a URI to
 * download with the API key, or (rarely) the bytes inline.
 * @see https://ai.google.dev/gemini-api/docs/video
 * @see https://ai.google.dev/api/rest/v1beta/models/predictLongRunning
 * @see https://ai.google.dev/api/rest/v1beta/operations
 */
export interface VeoRequestWire {
  instances: { prompt: string }[];
  parameters: {
    durationSeconds: number;
    negativePrompt?: string;
    seed?: number;
    enhancePrompt?: boolean;
    resolution?: string;
    aspectRatio?: string;
    sampleCount: 1;
  };
}

/** A `google.rpc.Status`: `code` is a gRPC code number (1 is CANCELLED), not an HTTP status. */
export interface VeoStatusWire {
  readonly code?: number;
  readonly message?: string;
}

export interface VeoVideoWire {
  readonly uri?: string;
  readonly encodedVideo?: string;
  readonly encoding?: string;
}

export interface VeoOperationWire {
  readonly name?: string;
  readonly done?: boolean;
  readonly error?: VeoStatusWire;
  readonly response?: {
    readonly generateVideoResponse?: {
      readonly generatedSamples?: readonly { readonly video?: VeoVideoWire }[];
      readonly raiMediaFilteredCount?: number;
      readonly raiMediaFilteredReasons?: readonly string[];
    };
  };
}
