/**
 * The `supported_endpoints` of a model: as configured, or else derived from its category. The
 * values name API paths under `/v1`: LLM models serve the three text interfaces; image models
 * serve generation, plus edits when every route can edit; video models serve video generation;
 * embedding models serve embeddings.
 */
import type { ModelConfig } from '../config/schema.ts';
import type { PublicCapabilities } from './schemas.ts';

export function supportedEndpoints(model: ModelConfig, capabilities: PublicCapabilities): string[] {
  if (model.supported_endpoints) return [...model.supported_endpoints];
  switch (model.category) {
    case 'LLM':
      return ['chat/completions', 'messages', 'responses'];
    case 'IMAGE':
      return capabilities.image_editing === true ? ['images/generations', 'images/edits'] : ['images/generations'];
    case 'VIDEO':
      return ['videos/generations'];
    case 'EMBEDDING':
      return ['embeddings'];
    default: {
      const unreachable: never = model.category;
      throw new Error(`unknown model category ${String(unreachable)}`);
    }
  }
}
