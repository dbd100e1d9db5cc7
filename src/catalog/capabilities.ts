/**
 * Public capabilities of a model in one view (docs/catalog.md, "Capabilities"). A value is exposed
 * only when every route guarantees it: true on every route → true, false on any route → false,
 * otherwise (unverified somewhere, or no route at all) omitted. `vision` is true whenever the model
 * takes image input.
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
  return capabilities;
}

function guaranteed(values: readonly (boolean | undefined)[]): boolean | undefined {
  if (values.includes(false)) return false;
  if (values.length > 0 && values.every((value) => value === true)) return true;
  return undefined;
}
