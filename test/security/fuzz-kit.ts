/**
 * What the property-based fuzz suites share (docs/security.md, "How each promise is tested"): the
 * seed (printed, and taken from FUZZ_SEED to replay a run), hostile JSON values and raw-body
 * mutations, hostile image files, the check every answer must pass, the figures a run reports, and
 * the ledger's exactness at the end.
 */
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import type { OwnerRef } from '../../src/storage/store.ts';
import { MAX_PDF_INFLATED_BYTES } from '../../src/tokens/pdf-size.ts';
import { flushRequestLog } from '../chat/helpers.ts';
import type { TestGateway } from '../helpers/gateway.ts';
import { makePdf, pdfBomb } from '../helpers/pdf.ts';
import { blackPng, PNG_CUT_AT_IHDR, pngBomb, pngFile, WEBP_CUT_AT_VP8X } from './files.ts';

/** FUZZ_SEED replays a run; otherwise a fresh seed, printed with the figures. */
export function fuzzSeed(): number {
  const given = process.env.FUZZ_SEED;
  if (given !== undefined && given !== '') {
    assert.match(given, /^-?\d+$/, 'FUZZ_SEED must be an integer');
    return Number(given) | 0;
  }
  return (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
}

/** The figures of one run, printed at its end (they go in the closing notes of a change). */
export class FuzzFigures {
  readonly name: string;
  readonly seed: number;
  cases = 0;
  readonly statuses = new Map<number, number>();
  /** RSS once the suite has loaded what it keeps (set by the suite after its warm-up). */
  rssStartAfterWarmUp = process.memoryUsage.rss();

  constructor(name: string, seed: number) {
    this.name = name;
    this.seed = seed;
  }

  count(status: number): void {
    this.cases += 1;
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  serverErrors(...allowed: number[]): number {
    return [...this.statuses].filter(([status]) => status >= 500 && !allowed.includes(status)).reduce((sum, [, count]) => sum + count, 0);
  }

  /** One line of figures; `upstream` statuses are counted apart (an upstream's failure told to the client, not the gateway's own). */
  report(...upstream: number[]): string {
    const mib = (bytes: number) => `${Math.round(bytes / 1048576)} MiB`;
    const statuses = [...this.statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status}×${count}`)
      .join(' ');
    const line = `${this.name}: seed ${this.seed} (FUZZ_SEED=${this.seed} replays it), ${this.cases} cases, 5xx ${this.serverErrors(...upstream)}${upstream.length > 0 ? ` (besides ${upstream.join('/')} for upstream failures)` : ''}, RSS ${mib(this.rssStartAfterWarmUp)} → ${mib(process.memoryUsage.rss())}; statuses ${statuses}`;
    console.log(line);
    return line;
  }
}

/** The answer of one case: a 4xx or 5xx carries the error envelope (docs/errors.md), with a request id. */
export function assertAnswer(status: number, headers: Headers, text: string, what: string): void {
  if (status < 400) return;
  assert.match(headers.get('content-type') ?? '', /^application\/json/, `${what}: ${status} content type`);
  assert.match(headers.get('x-gateway-request-id') ?? '', /^req_[0-9a-z]+$/, `${what}: ${status} request id`);
  const body = JSON.parse(text) as { error?: Record<string, unknown> };
  assert.ok(body.error && typeof body.error === 'object', `${what}: ${status} envelope in ${text.slice(0, 300)}`);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], `${what}: ${text.slice(0, 300)}`);
  assert.equal(typeof body.error.message, 'string', what);
}

const BOUNDARY_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  -0.5,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53 + 2,
  -(2 ** 53),
  1e308,
  -1e308,
  5e-324,
  1e21,
  200_000,
  200_001,
];

/** `{"a":[{"a":[…]}]}`, `levels` containers deep. */
export function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) value = level % 2 === 0 ? [value] : { a: value };
  return value;
}

/** Any JSON value a hostile client might put in a field: wrong types, boundaries, sizes, depth, pollution keys. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, '', ' ', '\u0000', '__proto__', 'constructor', '-1', '1e999', 'NaN', '\ud800', '\u202e', 'a'.repeat(256)),
  fc.constantFrom(...BOUNDARY_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer({ min: 1_000, max: 600_000 }).map((length) => 'x'.repeat(length)),
  fc.integer({ min: 100, max: 100_000 }).map((length) => new Array(length).fill(0)),
  fc.integer({ min: 1, max: 90 }).map(nested),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'prototype', 'type', 'role', 'text', 'toString'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** A path to a value inside a JSON value: object keys and array indices. */
export type JsonPath = readonly (string | number)[];

/** Every path inside `value` (the root included), so that a mutation can reach any field of a body. */
export function pathsOf(value: unknown, path: JsonPath = []): JsonPath[] {
  const paths: JsonPath[] = [path];
  if (Array.isArray(value)) value.forEach((item, index) => paths.push(...pathsOf(item, [...path, index])));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) paths.push(...pathsOf(item, [...path, key]));
  return paths;
}

export type Mutation =
  | { readonly kind: 'set'; readonly path: JsonPath; readonly value: unknown }
  | { readonly kind: 'delete'; readonly path: JsonPath }
  | { readonly kind: 'add'; readonly path: JsonPath; readonly key: string; readonly value: unknown };

export function mutations(base: unknown): fc.Arbitrary<Mutation[]> {
  const paths = pathsOf(base);
  const path = fc.constantFrom(...paths);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), path, value: hostileValue }),
    fc.record({ kind: fc.constant('delete' as const), path }),
    fc.record({
      kind: fc.constant('add' as const),
      path,
      key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra_body', 'gateway', 'x'), fc.string({ maxLength: 12 })),
      value: hostileValue,
    }),
  );
  return fc.array(mutation, { minLength: 0, maxLength: 3 });
}

/** `base` with the mutations applied, on a deep copy (own properties only, `__proto__` as a plain key). */
export function mutate(base: unknown, changes: readonly Mutation[]): unknown {
  let root = structuredClone(base);
  for (const change of changes) {
    if (change.path.length === 0) {
      if (change.kind === 'set') root = change.value;
      else if (change.kind === 'add' && typeof root === 'object' && root !== null) define(root, change.key, change.value);
      continue;
    }
    const parent = change.path
      .slice(0, -1)
      .reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string | number, unknown>)[key] : undefined), root);
    if (typeof parent !== 'object' || parent === null) continue;
    const key = change.path.at(-1)!;
    const target = (parent as Record<string | number, unknown>)[key];
    if (change.kind === 'set') define(parent, key, change.value);
    else if (change.kind === 'delete') {
      if (Array.isArray(parent) && typeof key === 'number') removeAt(parent, key);
      else delete (parent as Record<string | number, unknown>)[key];
    } else if (typeof target === 'object' && target !== null) define(target, change.key, change.value);
  }
  return root;
}

/**
 * Removes one item without `splice`: an earlier mutation may have given the array an own
 * `constructor` key, and `splice` reads it to build the array it returns (a TypeError then).
 */
function removeAt(items: unknown[], index: number): void {
  if (index >= items.length) return;
  for (let at = index; at < items.length - 1; at++) items[at] = items[at + 1];
  items.length -= 1;
}

function define(container: object, key: string | number, value: unknown): void {
  // An array's own `length` cannot be redefined (and a JSON array carries no named member to add).
  if (Array.isArray(container) && key === 'length') return;
  Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
}

/** What is done to the JSON text itself, after serialising. */
export type RawMutation =
  | { readonly kind: 'none' }
  | { readonly kind: 'duplicate-key'; readonly key: string; readonly value: unknown }
  | { readonly kind: 'pollution'; readonly text: string }
  | { readonly kind: 'invalid-utf8'; readonly bytes: readonly number[] }
  | { readonly kind: 'truncate'; readonly fraction: number }
  | { readonly kind: 'deep'; readonly levels: number }
  | { readonly kind: 'content-type'; readonly contentType: string | null };

export const rawMutation: fc.Arbitrary<RawMutation> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.record({
    kind: fc.constant('duplicate-key' as const),
    key: fc.constantFrom('model', 'messages', 'stream', 'input', 'image', 'prompt'),
    value: hostileValue,
  }),
  fc.record({
    kind: fc.constant('pollution' as const),
    text: fc.constantFrom('"__proto__":{"isAdmin":true}', '"constructor":{"prototype":{"isAdmin":true}}', '"__proto__":null'),
  }),
  fc.record({
    kind: fc.constant('invalid-utf8' as const),
    bytes: fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]),
  }),
  fc.record({ kind: fc.constant('truncate' as const), fraction: fc.double({ min: 0, max: 0.999, noNaN: true }) }),
  fc.record({ kind: fc.constant('deep' as const), levels: fc.integer({ min: 60, max: 20_000 }) }),
  fc.record({
    kind: fc.constant('content-type' as const),
    contentType: fc.constantFrom(
      null,
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      'application/jsonx',
      'multipart/form-data',
    ),
  }),
);

/** The bytes and content type sent for `body` after `raw` (the placeholder text marks where invalid UTF-8 goes). */
export function rawBody(body: unknown, raw: RawMutation, placeholder: string): { bytes: Buffer; contentType: string | null } {
  const text = JSON.stringify(body) ?? 'null';
  const isObject = text.startsWith('{') && text.length > 2;
  const afterBrace = (insert: string) => (isObject ? `{${insert},${text.slice(1)}` : text);
  switch (raw.kind) {
    case 'none':
      return { bytes: Buffer.from(text), contentType: 'application/json' };
    case 'duplicate-key':
      return {
        bytes: Buffer.from(isObject ? `${text.slice(0, -1)},${JSON.stringify(raw.key)}:${JSON.stringify(raw.value) ?? 'null'}}` : text),
        contentType: 'application/json',
      };
    case 'pollution':
      return { bytes: Buffer.from(afterBrace(raw.text)), contentType: 'application/json' };
    case 'invalid-utf8': {
      const bytes = Buffer.from(text);
      const at = bytes.indexOf(placeholder);
      return { bytes: at < 0 ? bytes : Buffer.concat([bytes.subarray(0, at), Buffer.from(raw.bytes), bytes.subarray(at)]), contentType: 'application/json' };
    }
    case 'truncate':
      return { bytes: Buffer.from(text.slice(0, Math.floor(text.length * raw.fraction))), contentType: 'application/json' };
    case 'deep':
      return { bytes: Buffer.from(afterBrace(`"deep":${'['.repeat(raw.levels)}${']'.repeat(raw.levels)}`)), contentType: 'application/json' };
    case 'content-type':
      return { bytes: Buffer.from(text), contentType: raw.contentType };
    default: {
      const unknown: never = raw;
      throw new Error(`unknown raw mutation ${JSON.stringify(unknown)}`);
    }
  }
}

/** Hostile image files, built once (the bomb inflates to 64 MiB from a few dozen KiB). */
export async function hostileImages(): Promise<readonly Buffer[]> {
  const rows = deflateSync(Buffer.alloc(2 * (1 + 2 * 4)));
  const jpegHeaderOnly = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00]);
  return [
    await pngBomb(64 * 1024 * 1024),
    PNG_CUT_AT_IHDR,
    WEBP_CUT_AT_VP8X,
    jpegHeaderOnly,
    pngFile(2, 2, rows, { ihdrCrc: 0 }),
    pngFile(2, 2, rows.subarray(0, rows.length - 4)),
    pngFile(100_000, 100_000, rows),
    pngFile(8192, 8192, deflateSync(Buffer.alloc(1024))),
    pngFile(2, 2, rows, { colorType: 5 }),
    blackPng(1, 1),
    blackPng(2, 2),
    Buffer.alloc(0),
  ];
}

/** PDFs for document fields: a compressed bomb past the inflation limit, a file cut short, one of no page, and two good ones. */
export function hostilePdfs(): readonly Buffer[] {
  const good = makePdf(2);
  return [
    pdfBomb(MAX_PDF_INFLATED_BYTES + 1),
    good.subarray(0, good.indexOf('stream\n') + 12),
    Buffer.from('%PDF-1.7\n'),
    good,
    makePdf(3, { objectStream: true }),
  ];
}

/**
 * An image field's value: a hostile file as base64 (sometimes as a data URL), or text that is not
 * base64 at all.
 */
export function imageField(files: readonly Buffer[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...files).map((file) => file.toString('base64')) },
    fc.constantFrom(...files).map((file) => `data:image/png;base64,${file.toString('base64')}`),
    fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('base64')),
    fc.constantFrom('not base64!', '====', 'iVBORw0KGgo', `${'A'.repeat(4 * 1024 * 1024)}`),
    hostileValue,
  );
}

/**
 * Once every hold is settled (background work included): no credit reserved, the balance equal to
 * the credits less the charges, and every charge equal to the cost its request's log row records.
 */
export async function assertLedgerExact(gateway: TestGateway): Promise<{ charges: number; charged: bigint }> {
  const owner: OwnerRef = { kind: 'account', id: gateway.account.id };
  const deadline = Date.now() + 20_000;
  while ((await gateway.store.getBalance(owner)).reserved !== 0n) {
    assert.ok(Date.now() < deadline, 'a reservation is still open');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await flushRequestLog(gateway);
  const balance = await gateway.store.getBalance(owner);
  const entries = await gateway.store.listEntries(owner);
  const sum = (kind: string) => entries.filter((entry) => entry.kind === kind).reduce((total, entry) => total + entry.amount, 0n);
  assert.equal(balance.balance, sum('credit') - sum('charge'), 'the balance is the credits less the charges');
  const byRequest = new Map<string, bigint>();
  for (const charge of entries.filter((entry) => entry.kind === 'charge')) {
    assert.ok(charge.requestId, `charge ${charge.id} names its request`);
    byRequest.set(charge.requestId, (byRequest.get(charge.requestId) ?? 0n) + charge.amount);
  }
  for (const [requestId, charged] of byRequest) {
    const row = await gateway.store.getRequest(requestId);
    assert.ok(row, `request ${requestId} is logged`);
    assert.equal(row.cost, charged, `request ${requestId}: the logged cost is what was charged`);
  }
  return { charges: byRequest.size, charged: sum('charge') };
}
