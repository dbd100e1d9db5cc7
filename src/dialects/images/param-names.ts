/** Canonical references named as the images API writes them. */
import type { ImageParam } from '../../canonical/index.ts';
import type { ParamNamer, ParamRef } from '../../policy/violation.ts';

const FIELD_NAMES: Readonly<Record<ImageParam, string>> = {
  n: 'n',
  size: 'size',
  quality: 'quality',
  image: 'image',
  mask: 'mask',
  responseFormat: 'response_format',
  user: 'user',
  prompt: 'prompt',
};

export const imageParamNames: ParamNamer = {
  name(ref: ParamRef): string {
    switch (ref.kind) {
      case 'image-field':
        return FIELD_NAMES[ref.field];
      // Video parameters never come from an image request; their canonical names are the API's.
      case 'video-field':
        return ref.field;
      case 'extra-body':
        return `extra_body.${ref.path}`;
      // Text references never come from an image request.
      case 'field':
      case 'tool-strict':
      case 'response-format-strict':
      case 'image':
        return 'body';
      default: {
        const unreachable: never = ref;
        return unreachable;
      }
    }
  },
};
