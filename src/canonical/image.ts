/**
 * Canonical image generation and editing: what the images dialect decodes into and every image
 * protocol translates to and from. Like the text types, a field that is `undefined` was not sent:
 * an omitted size keeps the provider's default, and an omitted quality is resolved per family
 * (src/policy/image-family.ts), never here.
 */

/** The image formats the gateway accepts as input (edits) and understands as output. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/webp';

/** An image the client sent (an edit's source image or mask), already checked to be what it says. */
export interface ImageInput {
  readonly data: Uint8Array;
  readonly mediaType: ImageMediaType;
  readonly width: number;
  readonly height: number;
}

/** The API's quality values; which ones a route accepts is catalog data (`limits.supported_qualities`). */
export type ImageQuality = 'standard' | 'hd' | 'low' | 'medium' | 'high' | 'auto';

/** The diffusion options of the `extra_body.gpu_pool` group. */
export interface GpuPoolOptions {
  readonly numInferenceSteps?: number;
  readonly guidanceScale?: number;
  readonly seed?: number;
  readonly negativePrompt?: string;
}

/** Parameters of an image request that policy or a protocol can reject by name. */
export type ImageParam = 'n' | 'size' | 'quality' | 'image' | 'mask' | 'responseFormat' | 'user' | 'prompt';

export interface CanonicalImageRequest {
  readonly operation: 'generate' | 'edit';
  /** The model name as the client wrote it (an id or an alias). */
  readonly model: string;
  /** The images API has no `models` fallback list. */
  readonly fallbackModels: readonly string[];
  readonly stream: false;
  readonly prompt: string;
  /** How many images; the API's default (1) is applied by the dialect, as it is a quantity billed. */
  readonly n: number;
  /** `auto` or `<W>x<H>`; undefined keeps the provider's default. */
  readonly size?: string;
  readonly quality?: ImageQuality;
  /** How the client wants the images: stored and linked (`url`), or inline (`b64_json`). */
  readonly responseFormat: 'url' | 'b64_json';
  readonly user?: string;
  readonly gpuPool?: GpuPoolOptions;
  /** Edits only. */
  readonly image?: ImageInput;
  readonly mask?: ImageInput;
}

/** One delivered image: always its bytes (a protocol downloads an upstream URL; clients never see one). */
export interface GeneratedImage {
  readonly data: Uint8Array;
  /**
   * The standard base64 text of `data` (or its ASCII bytes), when the upstream sent exactly that:
   * a `b64_json` answer carries it as received instead of encoding the bytes again (src/core/base64.ts).
   */
  readonly base64?: string | Uint8Array;
  readonly mediaType: ImageMediaType;
  /** The prompt as the upstream rewrote it, where it says. */
  readonly revisedPrompt?: string;
}

/** Token counts some image upstreams report (OpenAI GPT image models); informational and logged. */
export interface ImageTokenUsage {
  readonly inputTokens: number;
  readonly inputTextTokens?: number;
  readonly inputImageTokens?: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
}

export interface CanonicalImageResult {
  readonly images: readonly GeneratedImage[];
  readonly providerModel: string;
  /** Images the upstream withheld (safety filters); they are not delivered and not billed. */
  readonly filtered: number;
  readonly usage?: ImageTokenUsage;
  /** The quality the upstream was asked for, after the family's aliases and default; undefined: its own default. */
  readonly quality?: ImageQuality;
  /** The size the upstream was asked for (`<W>x<H>`); undefined when it chose. */
  readonly size?: string;
}
