/**
 * Public limits of a model in one view (docs/catalog.md, "Limits"): what every route can honour. A
 * maximum is the smallest across routes, a list of supported values is the intersection; a field
 * that any route leaves unverified (or with no route at all) is omitted. An empty list means no
 * value is supported everywhere. A configured `null` maximum means the route states no fixed
 * maximum, so it does not lower the result; the field is null only when every route says null.
 */
import { intersection, withoutUndefined } from './objects.ts';
import type { PublicLimits } from './schemas.ts';
import type { RouteEndpoint } from './types.ts';

export function publicLimits(routes: readonly RouteEndpoint[]): PublicLimits {
  if (routes.length === 0) return {};
  const all = routes.map((route) => route.limits);
  return withoutUndefined({
    max_tokens: smallestNullable(all.map((limits) => limits.max_tokens)),
    context_window: smallestNullable(all.map((limits) => limits.context_window)),
    max_images: smallest(all.map((limits) => limits.max_images)),
    max_duration_seconds: smallest(all.map((limits) => limits.max_duration_seconds)),
    supported_sizes: intersection(all.map((limits) => limits.supported_sizes)),
    supported_formats: intersection(all.map((limits) => limits.supported_formats)),
    reasoning_efforts: intersection(all.map((limits) => limits.reasoning_efforts)),
    supported_qualities: intersection(all.map((limits) => limits.supported_qualities)),
    supported_durations: intersection(all.map((limits) => limits.supported_durations)),
    max_input_tokens: smallest(all.map((limits) => limits.max_input_tokens)),
    max_batch_inputs: smallest(all.map((limits) => limits.max_batch_inputs)),
  });
}

function smallest(values: readonly (number | undefined)[]): number | undefined {
  if (values.includes(undefined)) return undefined;
  return Math.min(...(values as readonly number[]));
}

function smallestNullable(values: readonly (number | null | undefined)[]): number | null | undefined {
  if (values.includes(undefined)) return undefined;
  const numbers = values.filter((value): value is number => typeof value === 'number');
  return numbers.length === 0 ? null : Math.min(...numbers);
}
