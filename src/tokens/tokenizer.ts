/**
 * The local tokenizer: a maintained BPE implementation (o200k, the encoding of current OpenAI
 * models). Used for pre-flight estimates (quotes, context-window checks, token counting) and by the
 * simulated provider; never to bill a provider that reports its own usage.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type GptEncodingModule = typeof import('gpt-tokenizer/GptEncoding');
type Encoding = ReturnType<GptEncodingModule['GptEncoding']['getEncodingApi']>;
/** A rank's token: its text, or its bytes when they are not text on their own (part of a character). */
export type RankToken = string | number[];

const require = createRequire(import.meta.url);

/**
 * Loaded on first use: its rank tables take about 50 MB and 0.3 s to load, and a gateway whose
 * prompts stay small never needs them (estimate.ts bounds small prompts without tokenizing).
 */
let loaded: Encoding | undefined;
function o200k(): Encoding {
  loaded ??= (require('gpt-tokenizer/GptEncoding') as GptEncodingModule).GptEncoding.getEncodingApi('o200k_base', o200kRanks);
  return loaded;
}

/**
 * The o200k ranks, read from the package's own rank file (`<base64 token> <rank>` lines, the form
 * OpenAI publishes them in) rather than from its 2.4 MB JavaScript module of the same table:
 * compiling that module left the process 5–10 MB larger for good, for 0.1 s less to load
 * (docs/performance.md, "A savepoint journal, the usage rollups and the tokenizer's table"). A token is
 * its text when its bytes are UTF-8 that decodes and encodes back to them (a leading byte order
 * mark does not), else its bytes: the package's own rule (test/tokens/tokenizer.test.ts holds the
 * two tables equal).
 */
export function o200kRanks(): RankToken[] {
  const file = readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken'), 'latin1');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const ranks: RankToken[] = [];
  // One buffer for every token's bytes: a buffer each was 200,000 small allocations outside the heap.
  const scratch = Buffer.alloc(1024);
  for (let start = 0; start < file.length; ) {
    const newline = file.indexOf('\n', start);
    const end = newline === -1 ? file.length : newline;
    const space = file.indexOf(' ', start);
    if (space > start && space < end) {
      const bytes = scratch.subarray(0, scratch.write(file.slice(start, space), 'base64'));
      ranks[Number(file.slice(space + 1, end))] = textOf(bytes, utf8) ?? [...bytes];
    }
    start = end + 1;
  }
  return ranks;
}

function textOf(bytes: Uint8Array, utf8: TextDecoder): string | undefined {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return undefined;
  }
  return Buffer.byteLength(text) === bytes.length ? text : undefined;
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
