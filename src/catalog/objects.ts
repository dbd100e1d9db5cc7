/** Small helpers for building JSON-ready rows: omitted fields, list intersections, value comparison. */

type Defined<Shape> = { [Key in keyof Shape]: Exclude<Shape[Key], undefined> };

/** Drops the keys whose value is undefined, so an omitted field is really absent from the JSON. */
export function withoutUndefined<Shape extends object>(object: Shape): Partial<Defined<Shape>> {
  const result: Partial<Defined<Shape>> = {};
  for (const key of Object.keys(object) as (keyof Shape)[]) {
    const value = object[key];
    if (value !== undefined) result[key] = value as Exclude<Shape[keyof Shape], undefined>;
  }
  return result;
}

/**
 * Values present in every list, in the first list's order, without duplicates; undefined when
 * there is no list or any list is missing (unverified).
 */
export function intersection<Value>(lists: readonly (readonly Value[] | undefined)[]): Value[] | undefined {
  if (lists.length === 0 || lists.includes(undefined)) return undefined;
  const [first, ...rest] = lists as readonly (readonly Value[])[];
  return [...new Set(first)].filter((value) => rest.every((list) => list.includes(value)));
}

/** A canonical JSON text of a value with object keys sorted, to compare free-form metadata. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
