/**
 * PDFs in prompts are held at their real size (src/tokens/document-tokens.ts): an image of each
 * page and the text of the file, per provider family, with a margin, from the pages and the content
 * the gateway reads in the PDF, not a fixed guess. Over real HTTP with the Anthropic SDK.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { pdfTokenBound } from '../../src/tokens/document-tokens.ts';
import { MAX_PDF_INFLATED_BYTES, measurePdf } from '../../src/tokens/pdf-size.ts';
import { ownerOf, picosPerToken } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { makePdf, pdfBomb } from '../helpers/pdf.ts';
import { startAnthropicSimulator } from '../simulators/anthropic.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import type { Simulator } from '../simulators/harness.ts';

const MODEL = 'gateway/reads-anthropic';

describe('a multi-page PDF in a prompt is held at its real size over HTTP', () => {
  let gateway: TestGateway;
  let simulator: Simulator & { readonly baseUrl: string };
  let client: Anthropic;
  // Small enough that both prompts are quoted at their byte bound (QUOTE_AT_BOUND_MAX_TOKENS), so the difference is the PDF's alone.
  const pdf = makePdf(3, { objectStream: true, text: 'A line of a report. '.repeat(20) });

  before(async () => {
    simulator = await startAnthropicSimulator();
    gateway = await startGateway({ config: chatModelsConfig({ [MODEL]: [{ id: 'reads-anthropic', kind: 'anthropic', baseUrl: simulator.baseUrl }] }) });
    client = new Anthropic({ baseURL: gateway.baseUrl, apiKey: gateway.apiKey, maxRetries: 0 });
  });
  after(async () => {
    await gateway?.close();
    await simulator?.close();
  });

  const question: Anthropic.TextBlockParam = { type: 'text', text: 'Summarize the report.' };
  const document: Anthropic.DocumentBlockParam = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } };

  /** The charge of one message and the hold it settled, from the ledger. */
  async function chargeAndHold(content: Anthropic.ContentBlockParam[]): Promise<{ charged: bigint; held: bigint }> {
    const { response } = await client.messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content }] }).withResponse();
    const requestId = response.headers.get('x-gateway-request-id');
    const charge = (await gateway.store.listEntries(ownerOf(gateway))).find((entry) => entry.kind === 'charge' && entry.requestId === requestId);
    assert.ok(charge, `a charge for ${requestId}`);
    return { charged: charge.amount, held: (await gateway.store.getReservation(charge.reservationId!))!.amount };
  }

  test("an Anthropic route holds exactly the family's bound for the PDF and charges at most the hold", async () => {
    const size = measurePdf(pdf);
    assert.equal(size.pages, 3);
    const withPdf = await chargeAndHold([question, document]);
    const without = await chargeAndHold([question]);
    // The route's dearest input-side rate is the 1-hour cache write (test/simulators/gateway-config.ts).
    const tokens = pdfTokenBound('anthropic', size);
    assert.equal(withPdf.held - without.held, BigInt(tokens) * picosPerToken('2'), `${tokens} tokens held for the PDF`);
    assert.ok(withPdf.charged <= withPdf.held, `charged ${withPdf.charged} of a ${withPdf.held} hold`);
  });

  test('count_tokens counts the PDF at the bound of every family', async () => {
    const count = (content: Anthropic.ContentBlockParam[]) => client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content }] });
    const [withPdf, without] = await Promise.all([count([question, document]), count([question])]);
    assert.equal(withPdf.input_tokens - without.input_tokens, pdfTokenBound(undefined, measurePdf(pdf)));
  });

  test('a PDF bomb is a 400 naming the field, before any credit moves', async () => {
    const before = (await gateway.store.listEntries(ownerOf(gateway))).length;
    const bomb: Anthropic.DocumentBlockParam = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: pdfBomb(MAX_PDF_INFLATED_BYTES + 1).toString('base64') },
    };
    await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: [question, bomb] }] }), (error) => {
      assert.ok(error instanceof Anthropic.BadRequestError);
      assert.match(error.message, /messages\[0\]\.content\[1\]\.source\.data.*inflate to more than/);
      return true;
    });
    assert.equal((await gateway.store.listEntries(ownerOf(gateway))).length, before);
  });
});
