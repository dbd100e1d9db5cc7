/**
 * Public capabilities of a model in one view (docs/catalog.md, "Capabilities"). A value is exposed
 * only when every route guarantees it: true on every route → true, false on any route → false,
 * otherwise (unverified somewhere, or no route at all) omitted. `vision` is true whenever the model
 * takes image input. `dimensions` (embedding routes) is the range every route can shorten to, when
 * every route has one and they overlap.
 */
import { PUBLIC_CAPABILITIES, type PublicCapabilities } from './schemas.ts';
import type { RouteEndpoint } from './types.ts';

export function publicCapabilities(routes: readonly RouteEndpoint[], inputModalities: readonly string[]): PublicCapabilities {
  const capabilities: PublicCapabilities = {};
  for (const name of PUBLIC_CAPABILITIES) {
    const value = guaranteed(routes.map((route) => route.capabilities[name]));
    if (value !== undefined) capabilities[name] = value;
  }
  if (inputModalities.includes('image')) capabilities.vision = true;
  const dimensions = commonRange(routes.map((route) => route.capabilities.dimensions));
  if (dimensions) capabilities.dimensions = dimensions;
  return capabilities;
}

type Range = NonNullable<PublicCapabilities['dimensions']>;

function commonRange(ranges: readonly (Range | undefined)[]): Range | undefined {
  if (ranges.length === 0 || ranges.includes(undefined)) return undefined;
  const minimum = Math.max(...ranges.map((range) => range!.minimum));
  const maximum = Math.min(...ranges.map((range) => range!.maximum));
  return minimum <= maximum ? { minimum, maximum } : undefined;
}

function guaranteed(values: readonly (boolean | undefined)[]): boolean | undefined {
  if (values.includes(false)) return false;
  if (values.length > 0 && values.every((value) => value === true)) return true;
  return undefined;
}
