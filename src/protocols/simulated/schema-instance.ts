/**
 * A small valid instance of a JSON Schema: what the simulated provider puts in tool arguments and
 * structured output. It covers the keywords tool and response schemas use (types, required
 * properties, enums and consts, local $refs, anyOf/oneOf/allOf, numeric bounds, lengths, common
 * string formats). A `pattern` cannot be satisfied in general and is not attempted.
 */
type Schema = Record<string, unknown>;

const MAX_DEPTH = 32;

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

export function minimalInstance(schema: unknown, root: unknown = schema, depth = 0): unknown {
  if (schema === true || schema === undefined) return null;
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return null;
  const node = schema as Schema;
  if (typeof node.$ref === 'string') return minimalInstance(resolveRef(node.$ref, root), root, depth + 1);
  if ('const' in node) return node.const;
  if (Array.isArray(node.enum) && node.enum.length > 0) return node.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = node[key];
    if (Array.isArray(options) && options.length > 0) return minimalInstance(options[0], root, depth + 1);
  }
  if (Array.isArray(node.allOf) && node.allOf.length > 0) return mergeAll(node.allOf, root, depth);
  switch (typeOf(node)) {
    case 'object':
      return objectInstance(node, root, depth);
    case 'array':
      return arrayInstance(node, root, depth);
    case 'string':
      return stringInstance(node);
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

function objectInstance(node: Schema, root: unknown, depth: number): Record<string, unknown> {
  const properties = (node.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(node.required) ? (node.required as string[]) : [];
  const result: Record<string, unknown> = {};
  for (const name of required) result[name] = minimalInstance(properties[name], root, depth + 1);
  const minProperties = typeof node.minProperties === 'number' ? node.minProperties : 0;
  for (const name of Object.keys(properties)) {
    if (Object.keys(result).length >= minProperties) break;
    if (!(name in result)) result[name] = minimalInstance(properties[name], root, depth + 1);
  }
  return result;
}

function arrayInstance(node: Schema, root: unknown, depth: number): unknown[] {
  const prefix = Array.isArray(node.prefixItems) ? node.prefixItems : [];
  const count = Math.max(typeof node.minItems === 'number' ? node.minItems : 0, 0);
  const items: unknown[] = [];
  for (let index = 0; index < count; index++) {
    items.push(minimalInstance(index < prefix.length ? prefix[index] : node.items, root, depth + 1));
  }
  return items;
}

function stringInstance(node: Schema): string {
  const example = typeof node.format === 'string' ? FORMAT_EXAMPLES[node.format] : undefined;
  if (example !== undefined) return example;
  const minLength = typeof node.minLength === 'number' ? node.minLength : 0;
  return 'x'.repeat(minLength);
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

function mergeAll(parts: unknown[], root: unknown, depth: number): unknown {
  const instances = parts.map((part) => minimalInstance(part, root, depth + 1));
  if (instances.every((instance) => typeof instance === 'object' && instance !== null && !Array.isArray(instance))) {
    return Object.assign({}, ...instances);
  }
  return instances[0];
}

/** A local JSON pointer (`#/$defs/Item`); anything else resolves to an unconstrained schema. */
function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}
