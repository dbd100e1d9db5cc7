/**
 * The body of POST /v1/videos/generations (docs/video.md), validated strictly: unknown fields are
 * a 400 and nothing is coerced. `extra_body` groups are open at this level on purpose: an unknown
 * group or key is an `unsupported_parameter` named by the decoder, while the known keys' types and
 * ranges are checked here.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StrictObject } from '../schema-kit.ts';
import { MAX_PROMPT_CHARACTERS } from '../images/schema.ts';

export const MAX_VIDEO_SECONDS = 120;

const CloudAOptions = Type.Object(
  {
    negativePrompt: Type.Optional(Type.String({ maxLength: MAX_PROMPT_CHARACTERS })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    enhancePrompt: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true, description: 'Options of Veo-style providers.' },
);

const GpuPoolOptions = Type.Object(
  {
    size: Type.Optional(Type.String({ pattern: '^[0-9]+x[0-9]+$', description: '`<W>x<H>`, each side 1..8192.' })),
    fps: Type.Optional(Type.Integer({ minimum: 1, maximum: 60, description: 'Given together with num_frames.' })),
    num_frames: Type.Optional(Type.Integer({ minimum: 1, maximum: 7200, description: 'Given together with fps.' })),
    num_inference_steps: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2147483647 })),
    negative_prompt: Type.Optional(Type.String({ maxLength: MAX_PROMPT_CHARACTERS })),
  },
  { additionalProperties: true, description: 'Options of diffusion queue providers; each key needs the route’s approval.' },
);

const ExtraBody = Type.Object(
  { cloud_a: Type.Optional(CloudAOptions), gpu_pool: Type.Optional(GpuPoolOptions) },
  { additionalProperties: true, description: "Provider options: only the selected route's provider group (`cloud_a` or `gpu_pool`)." },
);

export const VideoGenerationRequest = StrictObject({
  model: Type.String({ minLength: 1, description: 'A video model id or alias.' }),
  prompt: Type.String({ minLength: 1, maxLength: MAX_PROMPT_CHARACTERS }),
  duration: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_VIDEO_SECONDS,
      description: "Seconds; model-specific (the model's limits.supported_durations). Omitted: the model's default.",
    }),
  ),
  pricingVariant: Type.Optional(Type.String({ minLength: 1, description: "A key of the model's pricing.variants." })),
  extra_body: Type.Optional(ExtraBody),
  user: Type.Optional(Type.String()),
});
export type VideoGenerationBody = Static<typeof VideoGenerationRequest>;

const VideoFile = Type.Object({
  url: Type.Optional(Type.String({ description: 'Signed URL, valid 10 minutes, refreshed on every poll (absent from webhook events).' })),
  expires_at: Type.Optional(Type.Integer({ description: 'Epoch seconds when url stops working.' })),
  content_type: Type.String(),
  duration_seconds: Type.Integer(),
  size: Type.Integer({ description: 'Bytes.' }),
});

export const VideoJobSchema = Type.Object({
  id: Type.String({ description: 'The job id (vid_…): its own id space, not a request id.' }),
  object: Type.Literal('video.generation.job'),
  created: Type.Integer({ description: 'Epoch seconds.' }),
  model: Type.String(),
  status: Type.Union([Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled')]),
  durationSeconds: Type.Integer({ description: 'Seconds asked for; on a completed job, seconds delivered (and billed).' }),
  data: Type.Array(VideoFile),
  error: Type.Union([Type.Object({ code: Type.Union([Type.String(), Type.Null()]), message: Type.String() }), Type.Null()]),
});
