/**
 * Images in prompts are held at their real size (src/tokens/image-tokens.ts): each provider
 * family's documented formula with a margin, from the dimensions in the image's header, not a
 * fixed guess. The formulas against the vendors' published examples, then holds over real HTTP.
 */
import assert from 'node:assert/strict';
import { crc32, deflateSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { imageTokenBound } from '../../src/tokens/image-tokens.ts';
import { ownerOf, picosPerToken } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { startAnthropicSimulator } from '../simulators/anthropic.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startGeminiSimulator } from '../simulators/gemini.ts';
import type { Simulator } from '../simulators/harness.ts';

/** `tokens` with the bound's 10% margin, rounded up. */
const withMargin = (tokens: number) => Math.ceil((tokens * 11) / 10);

describe('image token bounds per provider family', () => {
  test('Anthropic: width × height / 750, the long edge scaled to 1,568 first', () => {
    // The vendor's table: 1000×1000 is about 1,334 tokens.
    assert.equal(imageTokenBound('anthropic', { width: 1000, height: 1000 }), withMargin(1334));
    // 3136×1568 is scaled to 1568×784: 1,640 tokens (more than the ~1,600 the vendor resizes to).
    assert.equal(imageTokenBound('anthropic', { width: 3136, height: 1568 }), withMargin(Math.ceil((1568 * 784) / 750)));
  });

  test('Gemini: 258 per 768-pixel tile, never less than the highest media resolution (1,120)', () => {
    assert.equal(imageTokenBound('gemini', { width: 300, height: 300 }), withMargin(1120));
    assert.equal(imageTokenBound('gemini', { width: 4000, height: 3000 }), withMargin(6 * 4 * 258));
  });

  test('OpenAI: the larger of the tile count (170 a tile + 85) and 1,536 patches at the largest multiplier', () => {
    // The vendor's example: 2048×4096 at high detail is 1,105 tokens by tiles; patches cap at 1,536 × 2.46.
    assert.equal(imageTokenBound('openai', { width: 2048, height: 4096 }), withMargin(Math.ceil(1536 * 2.46)));
    // A small image: 64×64 is 4 patches (10 tokens) but 4 tiles once its shortest side is scaled to 768.
    assert.equal(imageTokenBound('openai', { width: 64, height: 64 }), withMargin(4 * 170 + 85));
  });

  test('a route of no known family takes the largest; an image of unknown size counts as 8192 a side', () => {
    const size = { width: 4000, height: 3000 };
    assert.equal(imageTokenBound(undefined, size), Math.max(...(['openai', 'anthropic', 'gemini'] as const).map((family) => imageTokenBound(family, size))));
    assert.equal(imageTokenBound('gemini', undefined), withMargin(11 * 11 * 258));
  });
});

/** A real PNG of `width` × `height` black pixels (1-bit grayscale), small however large it is. */
function blackPng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(1, 8); // bit depth
  header.writeUInt8(0, 9); // grayscale
  const row = Buffer.alloc(1 + Math.ceil(width / 8));
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('a large image in a prompt is held at its real size over HTTP', () => {
  let gateway: TestGateway;
  const simulators: Simulator[] = [];
  const image = `data:image/png;base64,${blackPng(4000, 3000).toString('base64')}`;

  before(async () => {
    const anthropic = await startAnthropicSimulator();
    const gemini = await startGeminiSimulator();
    simulators.push(anthropic, gemini);
    gateway = await startGateway({
      config: chatModelsConfig({
        'gateway/sees-anthropic': [{ id: 'sees-anthropic', kind: 'anthropic', baseUrl: anthropic.baseUrl }],
        'gateway/sees-gemini': [{ id: 'sees-gemini', kind: 'gemini', baseUrl: gemini.baseUrl }],
      }),
    });
  });
  after(async () => {
    await gateway?.close();
    for (const simulator of simulators) await simulator.close();
  });

  /** The hold of one chat completion, read from the ledger after it settled. */
  async function heldFor(model: string, content: unknown): Promise<bigint> {
    const answer = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      json: { model, max_tokens: 16, messages: [{ role: 'user', content }] },
    });
    assert.equal(answer.status, 200, answer.text);
    const requestId = answer.headers.get('x-gateway-request-id');
    const charge = (await gateway.store.listEntries(ownerOf(gateway))).find((entry) => entry.kind === 'charge' && entry.requestId === requestId);
    return (await gateway.store.getReservation(charge!.reservationId!))!.amount;
  }

  for (const [model, family] of [
    ['gateway/sees-anthropic', 'anthropic'],
    ['gateway/sees-gemini', 'gemini'],
  ] as const) {
    test(`${family}: a 4000×3000 image adds its family's bound at the dearest input rate to the hold`, async () => {
      const text = { type: 'text', text: 'What is in the picture?' };
      const withImage = await heldFor(model, [text, { type: 'image_url', image_url: { url: image } }]);
      const without = await heldFor(model, [text]);
      // The routes' dearest input-side rate is the 1-hour cache write (test/simulators/gateway-config.ts).
      const tokens = imageTokenBound(family, { width: 4000, height: 3000 });
      assert.equal(withImage - without, BigInt(tokens) * picosPerToken('2'), `${tokens} tokens held for the image`);
    });
  }
});
