/**
 * A small valid instance of a JSON Schema: what the simulated provider puts in tool arguments and
 * structured output. It covers the keywords tool and response schemas use (types, required
 * properties, enums and consts, local $refs, anyOf/oneOf/allOf, numeric bounds, lengths, common
 * string formats). A `pattern` cannot be satisfied in general and is not attempted.
 */
type Schema = Record<string, unknown>;

const MAX_DEPTH = 32;

/**
 * The work an instance may take, checked before it is done: a schema may ask for more
 * (`"minItems": 100000` nested twice, `"minLength": 1000000000`) than any provider would produce,
 * and the generator must not try. The bounds are those of a real structured-output answer: OpenAI
 * allows 5,000 object properties in a schema and 120,000 characters of names and values
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas). An instance
 * costs one unit per value and one per character of a string; a schema whose minimal instance
 * would cost more is refused (InstanceTooLarge) before anything over the bound is built.
 */
export const INSTANCE_LIMITS = {
  /** Items of one array, properties of one object. */
  maxBreadth: 5_000,
  /** Characters of one string. */
  maxStringLength: 120_000,
  /** Values and string characters of the whole instance. */
  maxTotal: 200_000,
} as const;

/** A schema whose minimal instance is over INSTANCE_LIMITS; `reason` says which bound. */
export class InstanceTooLarge extends Error {
  override readonly name = 'InstanceTooLarge';
}

/** The units an instance under construction may still spend. */
class Budget {
  #left: number = INSTANCE_LIMITS.maxTotal;

  spend(units: number): void {
    this.#left -= units;
    if (this.#left < 0)
      throw new InstanceTooLarge(`its smallest valid instance is over ${INSTANCE_LIMITS.maxTotal.toLocaleString('en')} values and characters`);
  }
}

/** A small valid instance of `schema`; throws InstanceTooLarge for one over INSTANCE_LIMITS. */
export function minimalInstance(schema: unknown): unknown {
  return instanceOf(schema, schema, 0, new Budget());
}

const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '1970-01-01T00:00:00Z',
  date: '1970-01-01',
  time: '00:00:00Z',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

function instanceOf(schema: unknown, root: unknown, depth: number, budget: Budget): unknown {
  budget.spend(1);
  if (schema === true || schema === undefined) return null;
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return null;
  const node = schema as Schema;
  if (typeof node.$ref === 'string') return instanceOf(resolveRef(node.$ref, root), root, depth + 1, budget);
  if ('const' in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = node[key];
    if (Array.isArray(options) && options.length > 0) return instanceOf(options[0], root, depth + 1, budget);
  }
  if (Array.isArray(node.allOf) && node.allOf.length > 0) return mergeAll(node.allOf, root, depth, budget);
  switch (typeOf(node)) {
    case 'object':
      return objectInstance(node, root, depth, budget);
    case 'array':
      return arrayInstance(node, root, depth, budget);
    case 'string':
      return stringInstance(node, budget);
    case 'integer':
      return numberInstance(node, true);
    case 'number':
      return numberInstance(node, false);
    case 'boolean':
      return false;
    default:
      return null;
  }
}

function typeOf(node: Schema): string | undefined {
  const type = node.type;
  if (Array.isArray(type)) return type.includes('null') ? 'null' : (type[0] as string | undefined);
  if (typeof type === 'string') return type;
  if (node.properties || node.required) return 'object';
  if (node.items) return 'array';
  return undefined;
}

function objectInstance(node: Schema, root: unknown, depth: number, budget: Budget): Record<string, unknown> {
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(node.required) ? node.required.filter((name): name is string => typeof name === 'string') : [];
  const minProperties = typeof node.minProperties === 'number' ? node.minProperties : 0;
  checkBreadth(Math.max(required.length, Math.min(minProperties, Object.keys(properties).length)), 'properties');
  // A null-prototype object: a property named `__proto__` is an own property, as in JSON.
  const result: Record<string, unknown> = Object.create(null);
  for (const name of required) result[name] = instanceOf(Object.hasOwn(properties, name) ? properties[name] : undefined, root, depth + 1, budget);
  for (const name of Object.keys(properties)) {
    if (Object.keys(result).length >= minProperties) break;
    if (!Object.hasOwn(result, name)) result[name] = instanceOf(properties[name], root, depth + 1, budget);
  }
  return result;
}

function arrayInstance(node: Schema, root: unknown, depth: number, budget: Budget): unknown[] {
  const prefix = Array.isArray(node.prefixItems) ? node.prefixItems : [];
  const count = Math.max(typeof node.minItems === 'number' ? node.minItems : 0, 0);
  checkBreadth(count, 'items');
  const items: unknown[] = [];
  for (let index = 0; index < count; index++) {
    items.push(instanceOf(index < prefix.length ? prefix[index] : node.items, root, depth + 1, budget));
  }
  return items;
}

function stringInstance(node: Schema, budget: Budget): string {
  const example = typeof node.format === 'string' ? FORMAT_EXAMPLES[node.format] : undefined;
  if (example !== undefined) return example;
  const minLength = typeof node.minLength === 'number' ? Math.max(Math.ceil(node.minLength), 0) : 0;
  if (minLength > INSTANCE_LIMITS.maxStringLength) {
    throw new InstanceTooLarge(`it asks for a string of ${minLength} characters; at most ${INSTANCE_LIMITS.maxStringLength.toLocaleString('en')} are produced`);
  }
  budget.spend(minLength);
  return 'x'.repeat(minLength);
}

function checkBreadth(count: number, what: 'items' | 'properties'): void {
  if (count > INSTANCE_LIMITS.maxBreadth) {
    throw new InstanceTooLarge(
      `it asks for ${count} ${what} in one ${what === 'items' ? 'array' : 'object'}; at most ${INSTANCE_LIMITS.maxBreadth.toLocaleString('en')} are produced`,
    );
  }
}

function numberInstance(node: Schema, integer: boolean): number {
  const minimum = typeof node.minimum === 'number' ? node.minimum : undefined;
  const exclusiveMinimum = typeof node.exclusiveMinimum === 'number' ? node.exclusiveMinimum : undefined;
  const maximum = typeof node.maximum === 'number' ? node.maximum : undefined;
  const exclusiveMaximum = typeof node.exclusiveMaximum === 'number' ? node.exclusiveMaximum : undefined;
  let value = 0;
  if (minimum !== undefined && value < minimum) value = minimum;
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) value = exclusiveMinimum + 1;
  if (maximum !== undefined && value > maximum) value = maximum;
  if (exclusiveMaximum !== undefined && value >= exclusiveMaximum) {
    // Between an exclusive upper bound and whatever lower bound there is.
    const lower = exclusiveMinimum ?? minimum ?? exclusiveMaximum - 2;
    value = (lower + exclusiveMaximum) / 2;
  }
  const step = typeof node.multipleOf === 'number' && node.multipleOf > 0 ? node.multipleOf : undefined;
  if (step !== undefined) value = Math.ceil(value / step) * step;
  return integer ? Math.ceil(value) : value;
}

function mergeAll(parts: unknown[], root: unknown, depth: number, budget: Budget): unknown {
  const instances = parts.map((part) => instanceOf(part, root, depth + 1, budget));
  if (instances.every((instance) => typeof instance === 'object' && instance !== null && !Array.isArray(instance))) {
    return Object.assign(Object.create(null), ...instances);
  }
  return instances[0];
}

/** A local JSON pointer (`#/$defs/Item`); anything else resolves to an unconstrained schema. */
function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodedSegment(raw);
    if (segment === undefined || typeof node !== 'object' || node === null || !Object.hasOwn(node, segment)) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

function decodedSegment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
  } catch {
    // A malformed escape (`%E0`) points nowhere.
    return undefined;
  }
}
