/**
 * Exact ledger results over real HTTP: the cost header, the stream's usage `cost` and the ledger
 * charge are one number, to the pico-USD, with cached tokens, the long-context tier at and just
 * above its threshold, web search and a fractional account rate.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';
import type { ChatCompletionBody } from '../../src/dialects/chat/schema.ts';
import { estimatePromptTokens } from '../../src/tokens/estimate.ts';
import { formatUsd, parseRateMultiplier } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { endpoint, eventually, ledger, model, newCharges, openai, ownerOf, picosPerToken, simulatedConfig } from '../chat/helpers.ts';

const LONG_SYSTEM = `You are a careful assistant. ${'Keep every answer short and exact. '.repeat(200)}`;
const body = (modelId: string, question: string, extra: Partial<ChatCompletionBody> = {}): ChatCompletionBody => ({
  model: modelId,
  messages: [
    { role: 'system', content: LONG_SYSTEM },
    { role: 'user', content: question },
  ],
  ...extra,
});
const PROMPT = estimatePromptTokens(decodeChatRequest(body('x', 'Where is the boundary?')).request);

const standard = { input_per_1m: 3, output_per_1m: 15, cache_read_per_1m: 0.3, cache_write_per_1m: 3.75 };
const longContext = (threshold: number) => ({ threshold_tokens: threshold, input_per_1m: 6, output_per_1m: 22.5, cache_read_per_1m: 0.6 });
const config = simulatedConfig([
  model('gateway/cached', [endpoint('sim-cached', { pricing: { unit: 'per_1m_tokens', ...standard } })]),
  model('gateway/lc-at', [endpoint('sim-lc', { pricing: { unit: 'per_1m_tokens', ...standard, long_context: longContext(PROMPT) } })]),
  model('gateway/lc-above', [endpoint('sim-lc', { pricing: { unit: 'per_1m_tokens', ...standard, long_context: longContext(PROMPT - 1) } })]),
  model('gateway/search', [
    endpoint('sim-search', { pricing: { unit: 'per_1m_tokens', ...standard }, search_price_per_query: 0.035, search_billing: 'per_request' }),
  ]),
]);

/** Rates in pico-USD per token, as the test computes them independently of the billing code. */
const STANDARD = { input: picosPerToken('3'), output: picosPerToken('15'), cacheRead: picosPerToken('0.3'), cacheWrite: picosPerToken('3.75') };
// The long-context tier has no cache-write rate: writes are billed at its input rate.
const LONG = { input: picosPerToken('6'), output: picosPerToken('22.5'), cacheRead: picosPerToken('0.6'), cacheWrite: picosPerToken('6') };

/** The account rate is 1.15: the cost × 115 / 100, a fraction of a pico rounded up. */
function expectedCharge(usage: OpenAI.CompletionUsage, rates: typeof STANDARD, extra = 0n): bigint {
  const cached = BigInt(usage.prompt_tokens_details!.cached_tokens!);
  const written = BigInt((usage.prompt_tokens_details as { cache_creation_tokens: number }).cache_creation_tokens);
  const uncached = BigInt(usage.prompt_tokens) - cached - written;
  const reference = uncached * rates.input + cached * rates.cacheRead + written * rates.cacheWrite + BigInt(usage.completion_tokens) * rates.output + extra;
  return (reference * 115n + 99n) / 100n;
}

describe('exact charges', () => {
  let gateway: TestGateway;
  let client: OpenAI;
  before(async () => {
    gateway = await startGateway({ config });
    await gateway.store.updateAccount(gateway.account.id, { rate: parseRateMultiplier('1.15') });
    gateway.deps.authenticator.invalidate();
    client = openai(gateway);
  });
  after(() => gateway.close());

  async function charged(request: ChatCompletionBody) {
    const before = await ledger(gateway);
    const { data, response } = await client.chat.completions.create(request as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    const charges = await newCharges(gateway, before);
    assert.equal(charges.length, 1);
    assert.equal(formatUsd(charges[0].amount), response.headers.get('x-gateway-cost-usd'), 'cost header = ledger charge');
    const after = await ledger(gateway);
    assert.equal(before.balance.balance - after.balance.balance, charges[0].amount);
    assert.equal(after.balance.reserved, 0n);
    return { usage: data.usage!, amount: charges[0].amount, data };
  }

  test('cache writes then cache reads, each at its own rate', async () => {
    const request = body('gateway/cached', 'First question?', { gateway: { cache: 'on', cache_ttl: '1h' } });
    const first = await charged(request);
    const written = (first.usage.prompt_tokens_details as { cache_creation_tokens: number }).cache_creation_tokens;
    assert.ok(written > 1000, `cache write of ${written} tokens`);
    assert.equal(first.usage.prompt_tokens_details!.cached_tokens, 0);
    assert.equal(first.amount, expectedCharge(first.usage, STANDARD));
    const second = await charged(request);
    assert.equal(second.usage.prompt_tokens_details!.cached_tokens, written);
    assert.equal(second.amount, expectedCharge(second.usage, STANDARD));
    assert.ok(second.amount < first.amount);
    const off = await charged(body('gateway/cached', 'First question?', { gateway: { cache: 'off' } }));
    assert.equal(off.usage.prompt_tokens_details!.cached_tokens, 0);
    assert.equal(off.amount, expectedCharge(off.usage, STANDARD));
  });

  test('a prompt of exactly threshold_tokens is billed at standard rates; one more token, all at long-context rates', async () => {
    const at = await charged(body('gateway/lc-at', 'Where is the boundary?'));
    assert.equal(at.usage.prompt_tokens, PROMPT);
    assert.equal(at.amount, expectedCharge(at.usage, STANDARD));
    const above = await charged(body('gateway/lc-above', 'Where is the boundary?'));
    assert.equal(above.usage.prompt_tokens, PROMPT);
    assert.equal(above.usage.completion_tokens, at.usage.completion_tokens);
    assert.equal(above.amount, expectedCharge(above.usage, LONG));
    assert.ok(above.amount > at.amount);
  });

  test('cached tokens count toward the threshold; the long-context tier bills cache reads and writes too', async () => {
    const request = body('gateway/lc-above', 'Where is the boundary?', { gateway: { cache: 'on' } });
    const first = await charged(request);
    assert.ok((first.usage.prompt_tokens_details as { cache_creation_tokens: number }).cache_creation_tokens > 0);
    assert.equal(first.amount, expectedCharge(first.usage, LONG));
    const second = await charged(request);
    assert.ok(second.usage.prompt_tokens_details!.cached_tokens! > 0);
    assert.equal(second.amount, expectedCharge(second.usage, LONG));
  });

  test('per-request web search is one billed unit on top of the tokens', async () => {
    const result = await charged({ model: 'gateway/search', messages: [{ role: 'user', content: 'search something' }], tools: [{ type: 'web_search' }] });
    const extension = (result.data as unknown as { x_gateway: { web_search: { billed_queries: number } } }).x_gateway;
    assert.equal(extension.web_search.billed_queries, 1);
    assert.equal(result.amount, expectedCharge(result.usage, STANDARD, 35_000_000_000n));
  });

  test('a stream’s usage chunk carries the same cost the ledger charged', async () => {
    const before = await ledger(gateway);
    const stream = await client.chat.completions.create({
      ...(body('gateway/cached', 'Stream it', { gateway: { cache: 'on' } }) as OpenAI.ChatCompletionCreateParamsStreaming),
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: (OpenAI.CompletionUsage & { cost?: string }) | undefined;
    for await (const chunk of stream) usage = chunk.usage ?? usage;
    const charges = await eventually(async () => {
      const found = await newCharges(gateway, before);
      assert.equal(found.length, 1);
      return found;
    });
    assert.equal(usage?.cost, formatUsd(charges[0].amount));
    assert.equal(charges[0].amount, expectedCharge(usage!, STANDARD));
  });

  test('credits − charges − open reservations balance to the pico', async () => {
    const owner = ownerOf(gateway);
    const entries = await gateway.store.listEntries(owner);
    const credits = entries.filter((entry) => entry.kind === 'credit').reduce((sum, entry) => sum + entry.amount, 0n);
    const charges = entries.filter((entry) => entry.kind === 'charge').reduce((sum, entry) => sum + entry.amount, 0n);
    const balance = await gateway.store.getBalance(owner);
    assert.equal(balance.reserved, 0n);
    assert.equal(balance.balance, credits - charges);
  });
});
