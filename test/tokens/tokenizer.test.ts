/**
 * The local token count: a long run of non-space characters is cut before encoding (BPE is
 * quadratic in a piece's length), and the linear scan that decides whether a text needs cutting
 * never changes a count. The oracle below cuts every text with the regular expression.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { countTextTokens, o200kRanks } from '../../src/tokens/tokenizer.ts';

const encoding = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as typeof import('gpt-tokenizer/encoding/o200k_base');
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Cuts every run of more than 256 non-space characters into slices of 256, then counts. */
function oracle(text: string): number {
  let tokens = 0;
  let last = 0;
  for (const match of text.matchAll(/\S{257,}/g)) {
    if (match.index > last) tokens += encoding.countTokens(text.slice(last, match.index), PLAIN_TEXT);
    for (let offset = 0; offset < match[0].length; offset += 256) tokens += encoding.countTokens(match[0].slice(offset, offset + 256), PLAIN_TEXT);
    last = match.index + match[0].length;
  }
  if (last < text.length) tokens += encoding.countTokens(text.slice(last), PLAIN_TEXT);
  return tokens;
}

test("the rank table read from the package's rank file is the package's own table, token for token", () => {
  const packaged = (createRequire(import.meta.url)('gpt-tokenizer/bpeRanks/o200k_base') as { default: (string | number[])[] }).default;
  const read = o200kRanks();
  assert.equal(read.length, packaged.length);
  // Tokens whose bytes are not text on their own, a byte order mark's among them, are kept as bytes.
  assert.ok(read.some((token) => Array.isArray(token) && token[0] === 0xef && token[1] === 0xbb && token[2] === 0xbf));
  assert.deepEqual(read, packaged);
});

describe('countTextTokens', () => {
  const prose = 'It was a bright cold day in April, and the clocks were striking thirteen. ';
  const cases: Record<string, string> = {
    'prose of 2 KB': prose.repeat(28),
    'a run of exactly 256': `${prose}${'x'.repeat(256)} ${prose}`,
    'a run of 257': `${prose}${'x'.repeat(257)} ${prose}`,
    'a run of 1,000 between words': `${prose}${'ab'.repeat(500)}${prose}`,
    'runs joined by a no-break space (white space only to the expression)': `${'y'.repeat(200)}\u00a0${'y'.repeat(200)}`,
    'runs joined by tabs and newlines': `${'z'.repeat(250)}\t${'z'.repeat(250)}\n${'z'.repeat(250)}`,
    'a special token as plain text': `${prose}<|endoftext|>${prose}`,
    'one letter, 50 KB': 'a'.repeat(50_000),
  };
  for (const [name, text] of Object.entries(cases)) {
    test(`${name}: the same count as cutting every text`, () => {
      assert.equal(countTextTokens(text), oracle(text));
    });
  }

  test('an empty text has no tokens', () => {
    assert.equal(countTextTokens(''), 0);
  });
});
