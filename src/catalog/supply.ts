/**
 * The model-level `supply` and `training_use`: the kinds of every enabled endpoint of the model,
 * `mixed` when both kinds are present, `none` when there is no active endpoint. They describe the
 * model, not one caller's view (docs/catalog.md, "Consent views"), so an owner without consent
 * still learns that a model it is served first-party also has community or training endpoints.
 */
import type { ModelRow } from './schemas.ts';
import type { RouteEndpoint } from './types.ts';

type ModelSupply = ModelRow['supply'];
type ModelTrainingUse = ModelRow['training_use'];

export function modelSupply(routes: readonly RouteEndpoint[]): ModelSupply {
  return combine(routes.map((route) => route.supply));
}

export function modelTrainingUse(routes: readonly RouteEndpoint[]): ModelTrainingUse {
  return combine(routes.map((route) => route.trainingUse));
}

function combine<Kind extends string>(kinds: readonly Kind[]): Kind | 'mixed' | 'none' {
  if (kinds.length === 0) return 'none';
  return kinds.every((kind) => kind === kinds[0]) ? kinds[0] : 'mixed';
}
