/**
 * Text generation as a kind of output: the chat, messages and responses dialects all produce it.
 * A request is priced in tokens (the estimated prompt and the largest output it allows, plus web
 * search), validated by the text policy, and served by the `chat` capability of a provider.
 */
import type { CanonicalRequest, CanonicalResult, Usage, WebSearchInfo } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { referenceCost } from '../../billing/cost.ts';
import { imageFamilyOf, quoteEndpoint } from '../../billing/quote.ts';
import { searchUnits } from '../../billing/search-units.ts';
import { checkRoute } from '../../policy/validate.ts';
import { CHAT, type ChatProtocol } from '../../protocols/protocol.ts';
import { PromptSize } from '../../tokens/estimate.ts';
import type { OutputKind } from '../kind.ts';
import { failOnErrorFinish } from '../stream-rules.ts';
import type { ServedCall, Settlement } from '../types.ts';

/** What a text call is billed for. */
export interface TextMeter {
  /** The provider's usage, or the documented estimate for a cut-off stream. */
  readonly usage: Usage;
  /** Web search billing units (`billed_queries`). */
  readonly searchUnits: number;
  /** The usage object as the provider reported it, for the request log. */
  readonly providerUsage?: Readonly<Record<string, unknown>>;
}

export interface TextTypes {
  readonly request: CanonicalRequest;
  readonly result: CanonicalResult;
  readonly meter: TextMeter;
  readonly estimate: PromptSize;
  readonly protocol: ChatProtocol;
}

export type TextCall = ServedCall<CanonicalRequest>;
export type TextSettlement = Settlement<TextMeter>;

/** The meter of a text call on the route that served it; `succeeded` is false for a cut-off stream. */
export function textMeter(
  request: CanonicalRequest,
  endpoint: RouteEndpoint,
  usage: Usage,
  webSearch: WebSearchInfo | undefined,
  succeeded: boolean,
  providerUsage?: Readonly<Record<string, unknown>>,
): TextMeter {
  return {
    usage,
    searchUnits: searchUnits(endpoint.prices, request.webSearch === true, webSearch, succeeded),
    ...(providerUsage !== undefined && { providerUsage }),
  };
}

export const TEXT: OutputKind<TextTypes> = {
  name: 'text',
  category: 'LLM',
  capability: CHAT,
  unservable: 'text generation',
  requestBytes: false,
  estimate: (request) => new PromptSize(request),
  check: (request, endpoint, protocol, prompt) => checkRoute({ request, endpoint, unsupportedParameters: protocol.unsupportedParameters, prompt }),
  quote: (request, endpoint, prompt) => quoteEndpoint(request, endpoint, prompt.forQuote(imageFamilyOf(endpoint.provider.kind))),
  meter(request, result, endpoint) {
    const finished = failOnErrorFinish(result);
    return textMeter(request, endpoint, finished.usage, finished.webSearch, true, finished.providerUsage);
  },
  cost: (prices, meter) => referenceCost(prices, meter.usage, meter.searchUnits),
  // The meter is already the log's shape.
  logged: (meter) => meter,
  // The prompt's estimate: the output is not known before the call, and is counted at settlement.
  tokens: (_request, prompt) => prompt,
};
