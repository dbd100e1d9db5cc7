/**
 * Most events of a streamed answer are one text delta each, wrapped in the same bytes every time
 * (the chunk's id, model and fields around the text): a stream of 20 words parses and checks 20
 * nearly identical JSON objects. A template is learned from one such event that was decoded in
 * full (parsed, checked against its schema, read): the event's data is split around the text's
 * JSON string. A later event whose data is those same bytes around another single JSON string is
 * the same object with another text, so its text is all there is to read; any other event, however
 * small its difference, is decoded in full as before.
 */
/** The text of an event that is the learned one but for its text; undefined when it differs anywhere else. */
export type DeltaTemplate = (data: string, event?: string) => string | undefined;

/**
 * The template of `data`, an event decoded in full whose only variable part is `text`, which `read`
 * finds in a parsed event; `event` is the SSE event name it came with (a wire where the name
 * decides the type). None when the text's JSON string is not found exactly once, or when another
 * string in its place is not what `read` finds (an upstream that escapes characters otherwise than
 * JSON.stringify, whose text was then found elsewhere).
 */
export function learnDeltaTemplate(data: string, text: string, read: (parsed: unknown) => unknown, event?: string): DeltaTemplate | undefined {
  const literal = JSON.stringify(text);
  const at = data.indexOf(literal);
  if (at < 0 || data.indexOf(literal, at + 1) >= 0) return undefined;
  const prefix = data.slice(0, at);
  const suffix = data.slice(at + literal.length);
  try {
    if (read(JSON.parse(prefix + PROBE_LITERAL + suffix)) !== PROBE) return undefined;
  } catch {
    return undefined;
  }
  return (candidate, candidateEvent) => {
    if (candidateEvent !== event) return undefined;
    const end = candidate.length - suffix.length;
    // Compared as slices: startsWith and endsWith took ten times as long on these strings.
    if (end - prefix.length < 2 || candidate.slice(0, prefix.length) !== prefix || candidate.slice(end) !== suffix) return undefined;
    const value = candidate.slice(prefix.length, end);
    // Most texts have nothing to unescape: plain characters between the string's two quotes.
    if (PLAIN_STRING.test(value)) return value.slice(1, -1);
    return value.charCodeAt(0) === QUOTE ? parsedString(value) : undefined;
  };
}

/** The text of a JSON string literal; undefined for anything else (`"a","b":"c"` is not valid JSON). */
function parsedString(literal: string): string | undefined {
  try {
    const text: unknown = JSON.parse(literal);
    return typeof text === 'string' ? text : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON string with no escape, hence with no character that needs one. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: JSON forbids them unescaped, so the pattern names them.
const PLAIN_STRING = /^"[^"\\\u0000-\u001f]*"$/;
const QUOTE = 0x22;
/** A text no upstream sends, put in the text's place to check where that place is. */
const PROBE = '\u0000delta-template\u0000';
const PROBE_LITERAL = JSON.stringify(PROBE);
