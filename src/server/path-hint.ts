/**
 * The likely base-URL mistake behind an unknown path. The OpenAI SDK appends `/chat/completions`
 * to a base URL that must end in `/v1`; the Anthropic SDK appends `/v1/messages` to the gateway's
 * root. A base URL with one `/v1` too many or too few is the commonest first-day 404.
 */

/** A sentence for the 404's message, or undefined when the path looks like no known route. */
export function baseUrlHint(path: string, known: (path: string) => boolean): string | undefined {
  const doubled = /^(?:\/v1){2,}(\/.*)$/.exec(path);
  if (doubled && known(`/v1${doubled[1]}`)) {
    return (
      `The path has /v1 twice: the base URL probably ends in /v1 and the client added its own. ` +
      'Use the gateway root as base URL for the Anthropic SDK, and the root followed by /v1 for the OpenAI SDK.'
    );
  }
  if (!path.startsWith('/v1/') && known(`/v1${path}`)) {
    return `Did you mean /v1${path}? The OpenAI SDK's base URL is the gateway root followed by /v1.`;
  }
  return undefined;
}
