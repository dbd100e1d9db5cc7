/** The worst-case quote reserved before a call. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { estimatePromptTokens } from '../../src/tokens/estimate.ts';
import { imageTokenBound, UNKNOWN_IMAGE_SIDE } from '../../src/tokens/image-tokens.ts';
import { quoteEndpoint, worstCaseQuote } from '../../src/billing/quote.ts';
import { DEFAULT_MAX_OUTPUT_TOKENS, maxOutputTokens } from '../../src/catalog/request-bounds.ts';
import { usageOfUnfinishedStream } from '../../src/billing/partial-usage.ts';
import { countTextTokens } from '../../src/tokens/tokenizer.ts';
import { parseRateMultiplier } from '../../src/core/money.ts';
import { chatRequest, endpoint, routeOf } from '../chat/helpers.ts';

const cheap = routeOf(endpoint('cheap', { pricing: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2 }, limits: { max_tokens: 100 } }));
const dear = routeOf(
  endpoint('dear', {
    pricing: {
      unit: 'per_1m_tokens',
      input_per_1m: 3,
      output_per_1m: 15,
      cache_write_per_1m: 3.75,
      long_context: { threshold_tokens: 50, input_per_1m: 6, output_per_1m: 22.5 },
    },
    limits: {},
    search_price_per_query: 0.01,
  }),
);

describe('maxOutputTokens', () => {
  test('the request’s limit, else the route’s, else the documented default', () => {
    assert.equal(maxOutputTokens(chatRequest({ max_tokens: 7 }), cheap), 7);
    assert.equal(maxOutputTokens(chatRequest(), cheap), 100);
    assert.equal(maxOutputTokens(chatRequest(), dear), DEFAULT_MAX_OUTPUT_TOKENS);
  });
});

describe('quoteEndpoint', () => {
  test('prompt at the dearest input-side rate (a cache write may cost more than input) plus the output budget', () => {
    const request = chatRequest({ max_tokens: 10 });
    assert.equal(quoteEndpoint(request, dear, 20), 20n * 3_750_000n + 10n * 15_000_000n);
    assert.equal(quoteEndpoint(request, cheap, 20), 20n * 1_000_000n + 10n * 2_000_000n);
  });

  test('a 1-hour cache-write rate above every other input-side rate is the one quoted, in its tier', () => {
    const oneHour = routeOf(
      endpoint('one-hour', {
        pricing: {
          unit: 'per_1m_tokens',
          input_per_1m: 3,
          output_per_1m: 15,
          cache_write_per_1m: 3.75,
          cache_write_1h_per_1m: 6,
          long_context: { threshold_tokens: 50, input_per_1m: 6, output_per_1m: 22.5, cache_write_1h_per_1m: 12 },
        },
        limits: {},
      }),
    );
    const request = chatRequest({ max_tokens: 10 });
    assert.equal(quoteEndpoint(request, oneHour, 20), 20n * 6_000_000n + 10n * 15_000_000n);
    assert.equal(quoteEndpoint(request, oneHour, 51), 51n * 12_000_000n + 10n * 22_500_000n);
  });

  test('an estimated prompt above the threshold is quoted at long-context rates', () => {
    const request = chatRequest({ max_tokens: 10 });
    assert.equal(quoteEndpoint(request, dear, 50), 50n * 3_750_000n + 10n * 15_000_000n);
    assert.equal(quoteEndpoint(request, dear, 51), 51n * 6_000_000n + 10n * 22_500_000n);
  });

  test('web search adds the worst-case search units', () => {
    const request = chatRequest({ max_tokens: 10, tools: [{ type: 'web_search' }] });
    assert.equal(quoteEndpoint(request, dear, 20) - quoteEndpoint(chatRequest({ max_tokens: 10 }), dear, 20), 5n * 10_000_000_000n);
  });
});

describe('worstCaseQuote', () => {
  test('the dearest route of the plan, times the account rate', () => {
    const request = chatRequest({ max_tokens: 10 });
    const worst = quoteEndpoint(request, dear, 20);
    assert.equal(
      worstCaseQuote([cheap, dear], (endpoint) => quoteEndpoint(request, endpoint, 20), parseRateMultiplier('2')),
      worst * 2n,
    );
    assert.equal(
      worstCaseQuote([cheap], (endpoint) => quoteEndpoint(request, endpoint, 20), parseRateMultiplier('1')),
      quoteEndpoint(request, cheap, 20),
    );
  });
});

describe('estimatePromptTokens', () => {
  test('text through the tokenizer, an image by URL at the bound of an image of unknown size, tool definitions and schemas included', () => {
    const text = chatRequest({ messages: [{ role: 'user', content: 'hello world' }] });
    const withImage = chatRequest({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello world' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
      ],
    });
    assert.equal(
      estimatePromptTokens(withImage) - estimatePromptTokens(text),
      imageTokenBound(undefined, { width: UNKNOWN_IMAGE_SIDE, height: UNKNOWN_IMAGE_SIDE }),
    );
    const withTool = chatRequest({
      messages: [{ role: 'user', content: 'hello world' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    });
    assert.ok(estimatePromptTokens(withTool) > estimatePromptTokens(text));
    assert.equal(estimatePromptTokens(text), 3 + 3 + countTextTokens('hello world'));
  });

  test('special-token text in a prompt is counted as text, never an error', () => {
    assert.ok(estimatePromptTokens(chatRequest({ messages: [{ role: 'user', content: 'a <|endoftext|> b' }] })) > 0);
  });
});

describe('usageOfUnfinishedStream', () => {
  test('the prompt estimate and the streamed text when the provider reported nothing', () => {
    const usage = usageOfUnfinishedStream(undefined, 40, { outputText: 'hello world', reasoningText: 'hmm' });
    assert.deepEqual(usage, {
      inputTokens: 40,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: countTextTokens('hello world') + countTextTokens('hmm'),
      reasoningTokens: countTextTokens('hmm'),
    });
  });

  test('reported input is kept; reported output only when it is ahead of the streamed text', () => {
    const reported = { inputTokens: 30, cacheReadTokens: 5, cacheWriteTokens: 0, outputTokens: 1, reasoningTokens: 0 };
    const usage = usageOfUnfinishedStream(reported, 99, { outputText: 'one two three four', reasoningText: '' });
    assert.equal(usage.inputTokens, 30);
    assert.equal(usage.cacheReadTokens, 5);
    assert.equal(usage.outputTokens, countTextTokens('one two three four'));
    const ahead = usageOfUnfinishedStream({ ...reported, outputTokens: 50 }, 99, { outputText: 'one', reasoningText: '' });
    assert.equal(ahead.outputTokens, 50);
  });

  test('reported cache writes keep their 1-hour part, so it is billed at the 1-hour rate', () => {
    const reported = { inputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 40, cacheWrite1hTokens: 25, outputTokens: 1, reasoningTokens: 0 };
    const usage = usageOfUnfinishedStream(reported, 99, { outputText: 'one two', reasoningText: '' });
    assert.deepEqual([usage.cacheWriteTokens, usage.cacheWrite1hTokens], [40, 25]);
    assert.equal(
      usageOfUnfinishedStream({ ...reported, cacheWrite1hTokens: undefined }, 99, { outputText: '', reasoningText: '' }).cacheWrite1hTokens,
      undefined,
    );
  });
});
