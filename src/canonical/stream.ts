import type { GatewayError } from '../core/errors.ts';
import type { OpaqueProviderData } from './message.ts';
import type { ContentLogprob, Finish, Citation } from './result.ts';
import type { Usage, WebSearchInfo } from './usage.ts';

/**
 * Canonical stream events. Parts are lifecycle triples (start / delta / end) identified by `index`,
 * the part's position in the final content, so that dialects with explicit blocks (messages,
 * responses) and those without (chat) can all be encoded without look-ahead.
 *
 * Ordering contract every protocol decoder keeps: one `start` first; a part's start before its
 * deltas and its end after them; parts may not interleave text with the same index; `usage` any
 * number of times (the last one wins, values are cumulative); exactly one `finish` or `error` last.
 */
export type StreamEvent =
  | { readonly type: 'start'; readonly providerResponseId?: string; readonly providerModel?: string }
  | { readonly type: 'text-start'; readonly index: number }
  /** `logprobs`: the tokens of this delta's text, when they were asked for and returned. */
  | { readonly type: 'text-delta'; readonly index: number; readonly text: string; readonly logprobs?: readonly ContentLogprob[] }
  | { readonly type: 'text-end'; readonly index: number; readonly citations?: readonly Citation[] }
  | { readonly type: 'reasoning-start'; readonly index: number; readonly redacted?: boolean }
  | { readonly type: 'reasoning-delta'; readonly index: number; readonly text: string }
  | { readonly type: 'reasoning-end'; readonly index: number; readonly signature?: OpaqueProviderData }
  | {
      readonly type: 'tool-call-start';
      readonly index: number;
      readonly id: string;
      readonly name: string;
      readonly signature?: OpaqueProviderData;
      readonly extraContent?: Readonly<Record<string, unknown>>;
    }
  | { readonly type: 'tool-call-delta'; readonly index: number; readonly argumentsDelta: string }
  | { readonly type: 'tool-call-end'; readonly index: number }
  /** `reported`: the usage object as the provider sent it (CanonicalResult.providerUsage). */
  | { readonly type: 'usage'; readonly usage: Usage; readonly reported?: Readonly<Record<string, unknown>> }
  | { readonly type: 'web-search'; readonly webSearch: WebSearchInfo }
  | { readonly type: 'finish'; readonly finish: Finish }
  | { readonly type: 'error'; readonly error: GatewayError };

/**
 * Events that arrived together (one upstream read), in stream order; never empty. Streams hand
 * events over a batch at a time: one asynchronous step per read instead of one per event, which
 * was most of what a streamed request cost in promises and garbage.
 */
export type StreamBatch = readonly [StreamEvent, ...StreamEvent[]];

const isBatch = (events: readonly StreamEvent[]): events is StreamBatch => events.length > 0;

/** Collects events as they are decoded; `take` hands them out as one batch and starts the next. */
export class BatchCollector {
  #events: StreamEvent[] = [];

  get size(): number {
    return this.#events.length;
  }

  push(event: StreamEvent): void {
    this.#events.push(event);
  }

  /** The events collected since the last take, or undefined when there are none. */
  take(): StreamBatch | undefined {
    const events = this.#events;
    if (!isBatch(events)) return undefined;
    this.#events = [];
    return events;
  }
}
