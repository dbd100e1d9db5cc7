/** Canonical references named as the videos API writes them. */
import type { ParamNamer, ParamRef } from '../../policy/violation.ts';

export const videoParamNames: ParamNamer = {
  name(ref: ParamRef): string {
    switch (ref.kind) {
      // The canonical names of video parameters are the API's (`duration`, `pricingVariant`).
      case 'video-field':
        return ref.field;
      case 'extra-body':
        return `extra_body.${ref.path}`;
      // Text and image references never come from a video request.
      case 'field':
      case 'tool-strict':
      case 'response-format-strict':
      case 'image':
      case 'image-field':
        return 'body';
      default: {
        const unreachable: never = ref;
        return unreachable;
      }
    }
  },
};
