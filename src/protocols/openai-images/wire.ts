/**
 * The OpenAI Images API as the gateway reads it: tolerant of fields it does not use.
 * @see https://platform.openai.com/docs/api-reference/images
 */
export interface ImagesRequestWire {
  model: string;
  prompt: string;
  n: number;
  size?: string;
  quality?: string;
  user?: string;
}

export interface ImagesResponseWire {
  readonly created?: number;
  readonly data?: readonly { readonly b64_json?: string; readonly url?: string; readonly revised_prompt?: string }[];
  readonly size?: string;
  readonly quality?: string;
  readonly usage?: {
    readonly input_tokens?: number;
    readonly input_tokens_details?: { readonly text_tokens?: number; readonly image_tokens?: number };
    readonly output_tokens?: number;
    readonly total_tokens?: number;
  };
}
