/**
 * Schema combinators that keep validation errors precise. A plain `anyOf` makes Ajv report the first
 * branch's complaint ("must be string" for a bad content part); these use `if`/`then`, so the error
 * names the exact field and value that is wrong (`messages[2].content[0].image_url.url`), and the
 * TypeScript type stays the union of the variants.
 */
import { Type, type Static, type TObject, type TSchema, type TUnsafe } from '@sinclair/typebox';

/** An object with exactly these properties: unknown fields are a 400, never ignored. */
export function StrictObject<T extends Parameters<typeof Type.Object>[0]>(properties: T, options: { description?: string } = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

/** One of a few strings, reported as "must be equal to one of the allowed values". */
export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

type TagOf<V extends TObject, K extends string> = V['properties'][K] extends { const: infer C } ? C : never;

/** Objects told apart by a string tag (`type`, `role`); each variant is checked only against its own shape. */
export function Tagged<K extends string, const V extends readonly TObject[]>(
  key: K,
  variants: V,
  options: { description?: string } = {},
): TUnsafe<Static<V[number]>> {
  const tags = variants.map((variant) => (variant.properties[key] as unknown as { const: TagOf<V[number], K> }).const);
  return Type.Unsafe<Static<V[number]>>({
    type: 'object',
    required: [key],
    properties: { [key]: { type: 'string', enum: tags } },
    allOf: variants.map((variant, index) => ({ if: { properties: { [key]: { const: tags[index] } } }, then: variant })),
    ...options,
  });
}

/** An array schema, or another shape when the value is not an array (`stop`, message `content`). */
export function ArrayOr<A extends TSchema, O extends TSchema>(array: A, otherwise: O, options: { description?: string } = {}) {
  return Type.Unsafe<Static<A> | Static<O>>({ if: { type: 'array' }, then: array, else: otherwise, ...options });
}

/** A string from a fixed set, or an object shape (`tool_choice`). */
export function StringOr<S extends TSchema, O extends TSchema>(string: S, otherwise: O, options: { description?: string } = {}) {
  return Type.Unsafe<Static<S> | Static<O>>({ if: { type: 'string' }, then: string, else: otherwise, ...options });
}

/** A value that may also be `null` (the Messages API's optional fields accept null as "not given"). */
export function Nullable<S extends TSchema>(schema: S, options: { description?: string } = {}) {
  return Type.Unsafe<Static<S> | null>({ if: { type: 'null' }, else: schema, ...options });
}
