import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { estimatePromptTokens, PromptSize, QUOTE_AT_BOUND_MAX_TOKENS } from '../../src/tokens/estimate.ts';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';

function requestWith(content: string) {
  return decodeChatRequest({
    model: 'gateway/unit',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content },
    ],
  }).request;
}

describe('prompt size', () => {
  test('the byte bound is never below the tokenizer estimate, whatever the script', () => {
    for (const text of ['hello world', '日本語のテキストです。', '🙂🙃 emoji 🎉', 'x'.repeat(5_000), 'mixed: ascii, ünïcödé, 中文, and numbers 12345']) {
      const size = new PromptSize(requestWith(text));
      assert.ok(size.bound >= size.tokens, `${text.slice(0, 20)}: ${size.bound} >= ${size.tokens}`);
      assert.equal(size.tokens, estimatePromptTokens(requestWith(text)));
    }
  });

  test('small prompts are quoted at the bound, large ones at the estimate', () => {
    const small = new PromptSize(requestWith('a short question'));
    assert.equal(small.forQuote(undefined), small.bound);
    const large = new PromptSize(requestWith('word '.repeat(QUOTE_AT_BOUND_MAX_TOKENS)));
    assert.ok(large.bound > QUOTE_AT_BOUND_MAX_TOKENS);
    assert.equal(large.forQuote(undefined), large.tokens);
  });

  test('a limit is exceeded only when the estimate is over it', () => {
    const size = new PromptSize(requestWith('hello world, a few ordinary words'));
    assert.ok(size.bound > size.tokens);
    assert.equal(size.exceeds(size.bound), false);
    assert.equal(size.exceeds(size.tokens), false, 'bound over the limit, estimate not: not exceeded');
    assert.equal(size.exceeds(size.tokens - 1), true);
  });
});
