/** Canonical references named as the images and videos APIs write them (one namer for both). */
import type { ImageParam } from '../canonical/index.ts';
import { mediaParamNamer, type ParamNamer } from '../policy/violation.ts';

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

export const mediaParamNames: ParamNamer = mediaParamNamer((ref) => {
  switch (ref.kind) {
    case 'image-field':
      return FIELD_NAMES[ref.field];
    // The canonical names of video parameters are the API's (`duration`, `pricingVariant`).
    case 'video-field':
      return ref.field;
    case 'extra-body':
      return `extra_body.${ref.path}`;
    default: {
      const unreachable: never = ref;
      return unreachable;
    }
  }
});
