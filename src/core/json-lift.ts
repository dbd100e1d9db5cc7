/**
 * JSON read from its bytes with the values of some members lifted out before the parse: an image
 * answer is a quarter of a megabyte of base64 in a few hundred bytes of JSON, and decoding all of
 * it as UTF-8 text and then parsing it, which copies the base64 into a string of its own, cost more
 * than the image's decoding (docs/performance.md, "Images at the cost of their bytes"). A lifted
 * value is found with two searches of the bytes (its closing quote, and any backslash, which keeps
 * the value in the parse); the rest of the JSON is parsed as usual and holds a placeholder instead.
 *
 * A lifted value is its raw bytes, unchecked: only for a reader that checks every byte itself, as
 * strict base64 decoding does (a byte JSON would refuse is no base64 character either). They are a
 * view of the body, not a copy, so that nothing of the payload is copied onto the JS heap to stay.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** The placeholder of lifted value `index`, and how every placeholder begins. No parsed string can begin so (see liftedJson). */
const MARK = '\u0000';
/** MARK as the JSON text writes it: a string whose text begins so keeps liftedJson from lifting anything. */
const MARK_TEXT = Buffer.from('\\u0000', 'latin1');

export interface LiftedJson {
  /** The parsed JSON, each lifted value replaced by its placeholder string. */
  readonly value: unknown;
  /** The raw bytes of a lifted value when `text` is its placeholder; undefined for any other string. */
  lifted(text: string): Buffer | undefined;
}

/**
 * Parses `bytes` as JSON, lifting the string values of members named one of `names` (as written,
 * without escapes) that hold no backslash. Throws what JSON.parse throws for a body that is not JSON.
 */
export function liftedJson(bytes: Buffer, names: readonly string[]): LiftedJson {
  const keys = names.map((name) => Buffer.from(`"${name}"`, 'latin1'));
  const spans: [start: number, end: number][] = [];
  // The first backslash at or after where the scan is (-1: none left), so that every byte is searched once.
  let backslash = bytes.indexOf(BACKSLASH);
  const backslashFrom = (from: number) => {
    if (backslash >= 0 && backslash < from) backslash = bytes.indexOf(BACKSLASH, from);
  };
  /** The closing quote of the string opening at `quote` (-1: it never closes), and whether it holds an escape. */
  const stringEnd = (quote: number): { end: number; escaped: boolean } => {
    let end = bytes.indexOf(QUOTE, quote + 1);
    let escaped = false;
    backslashFrom(quote + 1);
    while (end >= 0 && backslash >= 0 && backslash < end) {
      escaped = true;
      const after = backslash + 2;
      backslashFrom(after);
      if (end < after) end = bytes.indexOf(QUOTE, after);
    }
    return { end, escaped };
  };
  // A string whose text may read as a placeholder: nothing is lifted, so that none can be mistaken.
  const marked = (quote: number) =>
    quote + 1 + MARK_TEXT.length <= bytes.length && bytes.compare(MARK_TEXT, 0, MARK_TEXT.length, quote + 1, quote + 1 + MARK_TEXT.length) === 0;
  const named = (quote: number, end: number) => keys.some((key) => key.length === end + 1 - quote && bytes.compare(key, 0, key.length, quote, end + 1) === 0);

  for (let quote = bytes.indexOf(QUOTE); quote >= 0; ) {
    if (marked(quote)) return parsed(bytes, []);
    const name = stringEnd(quote);
    if (name.end < 0) return parsed(bytes, []);
    let after = name.end + 1;
    const colon = nextToken(bytes, after);
    if (!name.escaped && colon >= 0 && bytes[colon] === COLON && named(quote, name.end)) {
      const value = nextToken(bytes, colon + 1);
      if (value >= 0 && bytes[value] === QUOTE) {
        if (marked(value)) return parsed(bytes, []);
        const string = stringEnd(value);
        if (string.end < 0) return parsed(bytes, []);
        if (!string.escaped) spans.push([value, string.end + 1]);
        after = string.end + 1;
      }
    }
    quote = bytes.indexOf(QUOTE, after);
  }
  return parsed(bytes, spans);
}

/** The index of the first byte from `from` that is not JSON whitespace; -1 at the end. */
function nextToken(bytes: Buffer, from: number): number {
  for (let index = from; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return index;
  }
  return -1;
}

function parsed(bytes: Buffer, spans: readonly (readonly [number, number])[]): LiftedJson {
  if (spans.length === 0) return { value: JSON.parse(bytes.toString('utf8')), lifted: () => undefined };
  let text = '';
  let from = 0;
  spans.forEach(([start, end], index) => {
    text += `${bytes.toString('utf8', from, start)}"\\u0000${index}"`;
    from = end;
  });
  text += bytes.toString('utf8', from);
  const value: unknown = JSON.parse(text);
  return {
    value,
    lifted(placeholder) {
      if (!placeholder.startsWith(MARK)) return undefined;
      const span = spans[Number(placeholder.slice(MARK.length))];
      return span === undefined ? undefined : bytes.subarray(span[0] + 1, span[1] - 1);
    },
  };
}
