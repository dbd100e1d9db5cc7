/**
 * Veo on the Gemini API: `:predictLongRunning` starts a generation and answers a long-running
 * operation, which is then read by its name until `done`. A finished operation's file is a URI to
 * download with the API key, or (rarely) the bytes inline.
 * @see https://ai.google.dev/gemini-api/docs/video
 * @see https://ai.google.dev/api/rest/v1beta/models/predictLongRunning
 * @see https://ai.google.dev/api/rest/v1beta/operations
 */
import { type Static, Type } from '@sinclair/typebox';
import { Maybe, Partial } from '../wire-schema.ts';

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

// ---- operations: checked against these deliberately partial schemas (../wire-schema.ts) ----

/** A `google.rpc.Status`: `code` is a gRPC code number (1 is CANCELLED), not an HTTP status. */
const VeoStatusSchema = Partial({ code: Maybe(Type.Integer()), message: Maybe(Type.String()) });
export type VeoStatusWire = Static<typeof VeoStatusSchema>;

const Text = Maybe(Type.String());

export const VeoOperationSchema = Partial({
  name: Text,
  done: Maybe(Type.Boolean()),
  error: Maybe(VeoStatusSchema),
  response: Maybe(
    Partial({
      generateVideoResponse: Maybe(
        Partial({
          generatedSamples: Maybe(Type.Array(Partial({ video: Maybe(Partial({ uri: Text, encodedVideo: Text, encoding: Text })) }))),
          raiMediaFilteredCount: Maybe(Type.Integer({ minimum: 0 })),
          raiMediaFilteredReasons: Maybe(Type.Array(Type.String())),
        }),
      ),
    }),
  ),
});
