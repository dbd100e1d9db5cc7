/**
 * What a provider can be asked to do: generate text, images, video, embeddings. Each capability has its own
 * protocol interface, and a provider kind implements only the capabilities it serves (an image-only
 * provider implements `images` and nothing else). A kind of output names the capability it calls;
 * the registry finds the implementation for a route's provider kind.
 */
import type { ModelConfig, ProviderKind } from '../config/schema.ts';

/**
 * A capability's name, typed with the protocol interface that implements it, so that looking one
 * up in the registry returns that interface without a cast at the call site.
 */
export interface Capability<Protocol> {
  readonly name: string;
  /** Never set: carries the protocol type only. */
  readonly protocolType?: Protocol;
}

export function defineCapability<Protocol>(name: string): Capability<Protocol> {
  return { name };
}

/** One capability's implementation, as listed in the registry. */
export interface Implementation<Protocol> {
  readonly capability: Capability<Protocol>;
  readonly protocol: Protocol;
}

export function implement<Protocol>(capability: Capability<Protocol>, protocol: Protocol): Implementation<Protocol> {
  return { capability, protocol };
}

/** The implementations of one provider kind, by capability name. */
export type ProviderProtocols = ReadonlyMap<string, unknown>;

export function provides(...implementations: readonly Implementation<unknown>[]): ProviderProtocols {
  return new Map(implementations.map(({ capability, protocol }) => [capability.name, protocol]));
}

/** Every provider kind the gateway can call, with what it implements; tests substitute their own. */
export type ProtocolRegistry = Readonly<Partial<Record<ProviderKind, ProviderProtocols>>>;

export function protocolOf<Protocol>(registry: ProtocolRegistry, kind: ProviderKind, capability: Capability<Protocol>): Protocol | undefined {
  // Registered through implement(), which ties the value to this capability's protocol type.
  return registry[kind]?.get(capability.name) as Protocol | undefined;
}

export type ModelCategory = ModelConfig['category'];

/** The capability a model of each catalog category is called through. */
export const CATEGORY_CAPABILITY: Readonly<Record<ModelCategory, string>> = {
  LLM: 'chat',
  IMAGE: 'images',
  VIDEO: 'video',
  EMBEDDING: 'embeddings',
};

/**
 * Whether a route can be called: its provider kind implements the capability of the model's
 * category. The catalog's `available` follows it.
 */
export function servableBy(registry: ProtocolRegistry): (kind: ProviderKind, category: ModelCategory) => boolean {
  return (kind, category) => registry[kind]?.has(CATEGORY_CAPABILITY[category]) === true;
}
