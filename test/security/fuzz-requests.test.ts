/**
 * Property-based fuzzing of every endpoint's request (docs/security.md): each case is a valid base
 * body with up to three mutations (wrong types, boundary values, huge strings and arrays, deep
 * nesting, prototype-pollution keys, removed fields) and one mutation of its JSON text (duplicate
 * keys, invalid UTF-8, truncation, 20,000-level nesting, other content types), sent over real
 * HTTP; image fields (edit files, image parts of conversations) get hostile files (a decompression
 * bomb, headers cut short, bad CRCs, huge declared sizes) as JSON and as multipart, and PDF document
 * fields hostile PDFs (a compressed bomb, a file cut short, one of no page); ids and
 * signed-URL parts get any text. Every answer must be below 500, and every error the envelope; at
 * the end the process answers, its RSS has not grown without bound, and the ledger is exact. The
 * seed is printed; FUZZ_SEED replays a run.
 *
 * Text and embeddings run on the demo catalog's simulated provider with a funded key (so that a
 * case reaches the provider and the ledger moves); images and video use a key with no credit, so that validation
 * and decoding run in full and the call stops at the hold rather than drawing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  assertAnswer,
  assertLedgerExact,
  FuzzFigures,
  fuzzSeed,
  hostileImages,
  hostilePdfs,
  hostileValue,
  imageField,
  type JsonPath,
  mutate,
  mutations,
  rawBody,
  rawMutation,
} from './fuzz-kit.ts';

const SEED = fuzzSeed();
/** RSS may grow this much over the run (caches, the tokenizer's tables); a leak per case would pass it. */
const RSS_GROWTH_BOUND = 384 * 1024 * 1024;
const PLACEHOLDER = 'PLACEHOLDER';

interface Endpoint {
  readonly path: string;
  readonly base: unknown;
  readonly runs: number;
  /** The key that calls it: funded, or with no credit (the call ends at the hold). */
  readonly funded: boolean;
  /** Where the body holds image files (edit files, image parts of a conversation) or PDFs: each gets a hostile file. */
  readonly imageSlots?: readonly ImageSlot[];
}

/** The path of an image in a body, and how its base64 text is written there (a data URL for some dialects). */
interface ImageSlot {
  readonly path: JsonPath;
  readonly dataUrl?: boolean;
  /** The slot is a PDF document's, and gets hostile PDFs instead of images. */
  readonly pdf?: boolean;
}

const TEXT = 'gateway/atlas-4-5';
const FREE = 'gateway/quill-1-free';
const SCHEMA = { type: 'object', properties: { tags: { type: 'array', minItems: 2, items: { type: 'string', minLength: 1 } } }, required: ['tags'] };

const ENDPOINTS: readonly Endpoint[] = [
  {
    path: '/v1/chat/completions',
    funded: true,
    runs: 350,
    imageSlots: [{ path: ['messages', 1, 'content', 1, 'image_url', 'url'], dataUrl: true }],
    base: {
      model: TEXT,
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: `${PLACEHOLDER} hello` },
            { type: 'image_url', image_url: { url: '' } },
          ],
        },
      ],
      max_tokens: 16,
      temperature: 0.5,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: SCHEMA } }],
      stream: false,
    },
  },
  {
    path: '/v1/chat/completions',
    funded: true,
    runs: 250,
    base: {
      model: FREE,
      messages: [{ role: 'user', content: `${PLACEHOLDER} hello` }],
      response_format: { type: 'json_schema', json_schema: { name: 'tags', schema: SCHEMA } },
      stream: true,
      stream_options: { include_usage: true },
    },
  },
  {
    path: '/v1/messages',
    funded: true,
    runs: 300,
    imageSlots: [{ path: ['messages', 0, 'content', 1, 'source', 'data'] }, { path: ['messages', 0, 'content', 2, 'source', 'data'], pdf: true }],
    base: {
      model: TEXT,
      max_tokens: 16,
      system: 'Be brief.',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: `${PLACEHOLDER} hello` },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: '' } },
          ],
        },
      ],
      tools: [{ name: 'lookup', input_schema: SCHEMA }],
      stream: false,
    },
  },
  {
    path: '/v1/messages/count_tokens',
    funded: true,
    runs: 200,
    base: {
      model: TEXT,
      system: 'Be brief.',
      messages: [{ role: 'user', content: `${PLACEHOLDER} hello` }],
      tools: [{ name: 'lookup', input_schema: SCHEMA }],
    },
  },
  {
    path: '/v1/responses',
    funded: true,
    runs: 300,
    imageSlots: [{ path: ['input', 0, 'content', 1, 'image_url'], dataUrl: true }],
    base: {
      model: TEXT,
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: `${PLACEHOLDER} hello` },
            { type: 'input_image', image_url: '' },
          ],
        },
      ],
      instructions: 'Be brief.',
      max_output_tokens: 16,
      tools: [{ type: 'function', name: 'lookup', parameters: SCHEMA }],
      background: false,
      store: true,
    },
  },
  {
    path: '/v1/responses',
    funded: true,
    runs: 150,
    base: { model: FREE, input: `${PLACEHOLDER} hello`, background: true, text: { format: { type: 'json_schema', name: 'tags', schema: SCHEMA } } },
  },
  {
    path: '/v1/images/generations',
    funded: false,
    runs: 200,
    base: { model: 'gateway/prism-image-2', prompt: `${PLACEHOLDER} a cat`, n: 1, size: '1024x1024', quality: 'low' },
  },
  {
    path: '/v1/images/edits',
    funded: false,
    runs: 250,
    imageSlots: [{ path: ['image'] }, { path: ['mask'] }],
    base: { model: 'gateway/prism-image-2', prompt: `${PLACEHOLDER} a hat`, image: '', mask: '', n: 1, size: '1024x1024' },
  },
  {
    path: '/v1/embeddings',
    funded: true,
    runs: 200,
    base: { model: 'gateway/atlas-embed-1', input: `${PLACEHOLDER} a text`, encoding_format: 'base64', dimensions: 64, user: 'u-1' },
  },
  {
    path: '/v1/videos/generations',
    funded: false,
    runs: 150,
    base: { model: 'gateway/reel-3', prompt: `${PLACEHOLDER} waves`, duration: 4, extra_body: { gpu_pool: { size: '64x64' } } },
  },
];

describe('request fuzzing', () => {
  let gateway: TestGateway;
  let broke: string;
  let files: readonly Buffer[];
  const pdfs = hostilePdfs();
  const figures = new FuzzFigures('request fuzz', SEED);

  before(async () => {
    gateway = await startGateway({ creditUsd: '1000' });
    broke = await gateway.createKey({ owner: { kind: 'account', id: (await gateway.store.createAccount({ name: 'no credit' })).id } });
    files = await hostileImages();
    // The tokenizer's tables and the routes' first compilation are loaded before RSS is measured.
    await send(
      '/v1/messages/count_tokens',
      gateway.apiKey,
      Buffer.from(JSON.stringify({ model: TEXT, messages: [{ role: 'user', content: 'warm up' }] })),
      'application/json',
    );
    figures.rssStartAfterWarmUp = process.memoryUsage.rss();
  });
  after(() => gateway.close());

  /** Sends one case and checks its answer; returns the status. */
  async function send(path: string, key: string, body: Buffer | FormData | undefined, contentType: string | null, method = 'POST'): Promise<number> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (contentType !== null && !(body instanceof FormData)) headers['content-type'] = contentType;
    const response = await fetch(`${gateway.baseUrl}${path}`, { method, headers, body });
    const text = await response.text();
    figures.count(response.status);
    assert.ok(response.status < 500, `${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
    assertAnswer(response.status, response.headers, text, `${method} ${path}`);
    return response.status;
  }

  for (const endpoint of ENDPOINTS) {
    const { path, base, runs, funded, imageSlots = [] } = endpoint;
    test(`${path} (${runs} cases${(base as { stream?: boolean }).stream ? ', streamed' : ''})`, async () => {
      const key = () => (funded ? gateway.apiKey : broke);
      const images = fc.tuple(
        ...imageSlots.map((slot) =>
          imageField(slot.pdf ? pdfs : files).map((value) => ({
            kind: 'set' as const,
            path: slot.path,
            value: slot.dataUrl && typeof value === 'string' && !value.startsWith('data:') ? `data:image/png;base64,${value}` : value,
          })),
        ),
      );
      await fc.assert(
        fc.asyncProperty(images, mutations(base), rawMutation, async (placed, changes, raw) => {
          const body = mutate(base, [...placed, ...changes]);
          const sent = rawBody(body, raw, PLACEHOLDER);
          await send(path, key(), sent.bytes, sent.contentType);
        }),
        { seed: SEED, numRuns: runs, endOnFailure: true },
      );
    });
  }

  test('/v1/images/edits as multipart (200 cases)', async () => {
    const part = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...files).map((file) => ({ file })) },
      fc.uint8Array({ maxLength: 256 }).map((bytes) => ({ file: Buffer.from(bytes) })),
      hostileValue.map((value) => ({ text: typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null') })),
    );
    const field = fc.constantFrom('image', 'image[]', 'mask', 'model', 'prompt', 'n', 'size', '__proto__', 'constructor', 'x');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(field, part), { maxLength: 5 }), fc.boolean(), async (parts, withBase) => {
        const form = new FormData();
        if (withBase) {
          form.append('model', 'gateway/prism-image-2');
          form.append('prompt', 'a hat');
        }
        for (const [name, value] of parts) {
          if ('file' in value) form.append(name, new Blob([new Uint8Array(value.file)], { type: 'image/png' }), 'file.png');
          else form.append(name, value.text);
        }
        await send('/v1/images/edits', broke, form, null);
      }),
      { seed: SEED, numRuns: 200, endOnFailure: true },
    );
  });

  test('ids and signed-URL parts of every id route (300 cases)', async () => {
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 40 }),
      fc.integer({ min: 90, max: 2_000 }).map((length) => 'r'.repeat(length)),
      fc.constantFrom('..', '.', '%', '%E0%A4%A', '%00', '%2F', 'resp_', 'req_', 'vid_', '__proto__', 'constructor'),
    );
    const segment = fc.oneof(
      text.map(encodeURIComponent),
      text.filter((value) => !/[/?#\s]/.test(value) && value !== '' && value !== '.' && value !== '..'),
    );
    const route = fc.oneof(
      segment.map((id) => ['GET', `/v1/responses/${id}`] as const),
      segment.map((id) => ['POST', `/v1/responses/${id}/cancel`] as const),
      segment.map((id) => ['GET', `/v1/outputs/${id}`] as const),
      segment.map((id) => ['GET', `/v1/videos/generations/${id}`] as const),
      fc
        .tuple(segment, segment, text, text)
        .map(
          ([id, name, expires, signature]) =>
            ['GET', `/v1/outputs/${id}/files/${name}?expires=${encodeURIComponent(expires)}&signature=${encodeURIComponent(signature)}`] as const,
        ),
    );
    await fc.assert(
      fc.asyncProperty(route, fc.boolean(), async ([method, path], funded) => {
        await send(path, funded ? gateway.apiKey : broke, undefined, null, method);
      }),
      { seed: SEED, numRuns: 300, endOnFailure: true },
    );
  });

  test('after every case: the process answers, its memory is bounded, and the ledger is exact', async (context) => {
    const health = await fetch(`${gateway.baseUrl}/healthz`);
    assert.equal(health.status, 200);
    const { charges, charged } = await assertLedgerExact(gateway);
    const line = figures.report();
    context.diagnostic(`${line}; ${charges} charged requests, ${charged} pico-USD`);
    assert.equal(figures.serverErrors(), 0);
    assert.ok(figures.cases >= 2_500, `${figures.cases} cases`);
    const growth = process.memoryUsage.rss() - figures.rssStartAfterWarmUp;
    assert.ok(growth < RSS_GROWTH_BOUND, `RSS grew by ${Math.round(growth / 1048576)} MiB`);
  });
});
