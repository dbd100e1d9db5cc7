/**
 * The `images` capability: image generation and edits. A provider kind that serves images
 * implements this interface; the images kind (src/pipeline/kinds/image.ts) calls it. Each protocol
 * also declares its *family*: the rules of its wire format that decide, before any credit moves,
 * which requests it can express at all (src/policy/image-family.ts).
 */
import type { CanonicalImageRequest, CanonicalImageResult } from '../canonical/index.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { defineCapability } from './capability.ts';
import type { ImageFamily } from '../policy/image-family.ts';
import type { CallContext } from './protocol.ts';

export interface ImagesProtocol {
  readonly family: ImageFamily;
  /**
   * One generation or edit. The quality and size it asked the upstream for (after the family's
   * aliases) are in the result, so that billing prices what was asked, not what was written.
   */
  complete(request: CanonicalImageRequest, endpoint: RouteEndpoint, context: CallContext): Promise<CanonicalImageResult>;
}

export const IMAGES = defineCapability<ImagesProtocol>('images');
