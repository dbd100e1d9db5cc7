/**
 * The local tokenizer: a maintained BPE implementation (o200k, the encoding of current OpenAI
 * models). Used for pre-flight estimates (quotes, context-window checks, token counting) and by the
 * simulated provider; never to bill a provider that reports its own usage.
 */
import { createRequire } from 'node:module';

type Encoding = typeof import('gpt-tokenizer/encoding/o200k_base');

/**
 * Loaded on first use: its rank tables take about 70 MB and 0.2 s to load, and a gateway whose
 * prompts stay small never needs them (estimate.ts bounds small prompts without tokenizing).
 */
let loaded: Encoding | undefined;
function o200k(): Encoding {
  loaded ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Encoding;
  return loaded;
}

/**
 * Client text is plain text: a `<|endoftext|>` inside a prompt is counted as ordinary characters.
 * (The package's default throws on special tokens, which would turn hostile input into a 500.)
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE merges inside one pre-tokenized piece take time quadratic in its length, and a run of
 * characters without whitespace is one piece: 200 KB of a single letter would block the process
 * for many seconds. Such runs are cut into slices of this length before encoding; real words are
 * far shorter, so counts change only for text no model would tokenize well anyway.
 */
const MAX_RUN = 256;
const LONG_RUN = new RegExp(`\\S{${MAX_RUN + 1},}`, 'g');

function* segments(text: string): Generator<string> {
  let last = 0;
  for (const match of text.matchAll(LONG_RUN)) {
    if (match.index > last) yield text.slice(last, match.index);
    for (let offset = 0; offset < match[0].length; offset += MAX_RUN) yield match[0].slice(offset, offset + MAX_RUN);
    last = match.index + match[0].length;
  }
  if (last < text.length) yield text.slice(last);
}

/**
 * Whether `text` may hold a run that `segments` would cut: a linear scan, about a tenth of what
 * the regular expression costs over a whole prompt (which was half the time of counting 2 KB). Only ASCII white space ends a run here, so text with other
 * white space may be reported long when it is not; it then takes the exact path, with the same count.
 */
function mayHaveLongRun(text: string): boolean {
  if (text.length <= MAX_RUN) return false;
  let run = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === 32 || (code >= 9 && code <= 13)) run = 0;
    else if (++run > MAX_RUN) return true;
  }
  return false;
}

export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  if (!mayHaveLongRun(text)) return o200k().countTokens(text, PLAIN_TEXT);
  let tokens = 0;
  for (const segment of segments(text)) tokens += o200k().countTokens(segment, PLAIN_TEXT);
  return tokens;
}

/** The longest prefix of `text` that fits in `maxTokens` tokens (whole tokens only). */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const kept: number[] = [];
  for (const segment of segments(text)) {
    const tokens = o200k().encode(segment, PLAIN_TEXT);
    if (kept.length + tokens.length > maxTokens) {
      kept.push(...tokens.slice(0, maxTokens - kept.length));
      return o200k().decode(kept);
    }
    kept.push(...tokens);
  }
  return text;
}
