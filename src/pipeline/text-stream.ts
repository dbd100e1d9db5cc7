/**
 * Text streams on the metered-call core: opens the first route that produces an event, forwards
 * the route's canonical events (read under the rules of ./stream-rules.ts), settles the request
 * exactly once when the stream finishes, fails or is abandoned by its consumer, and writes the
 * request log row.
 *
 * What a stream costs (docs/billing.md): a finished stream is billed from the provider's final
 * usage; a stream cut off by an upstream failure or by the client is billed for the prompt and the
 * output generated up to that point (billing/partial-usage.ts). The upstream call is aborted as
 * soon as the client goes away, so nothing generated after that is billed. An upstream that streams
 * on past what the hold pays for is stopped, and the stream ends with an error (./hold-watch.ts).
 */
import { performance } from 'node:perf_hooks';
import type { Finish, StreamBatch } from '../canonical/index.ts';
import { errors, type GatewayError } from '../core/errors.ts';
import { usageOfUnfinishedStream } from '../billing/partial-usage.ts';
import { maxOutputTokens } from '../catalog/request-bounds.ts';
import { asGatewayError } from '../routing/fallback.ts';
import { StreamAccumulator } from './accumulate.ts';
import { openStreamWithFallback, type OpenedStream } from './attempts.ts';
import { Deadlines, type Deadline } from './deadlines.ts';
import { HoldWatch } from './hold-watch.ts';
import { TEXT, textMeter, type TextCall, type TextSettlement, type TextTypes } from './kinds/text.ts';
import { crashPoint } from '../core/crash-point.ts';
import type { Link } from '../core/linked-list.ts';
import type { MeteredCall } from './metered-call.ts';
import type { Pipeline, PreparedCall } from './pipeline.ts';
import type { CallInput, RenderResult } from './types.ts';

/** A stream that has started: its first event came from this route, so no fallback remains. */
export interface StreamRun {
  readonly call: TextCall;
  /**
   * Canonical events for the client, in batches of those that arrived together, the terminal
   * `finish` or `error` last. The request is settled before the terminal event is handed out, so
   * `settlement` is set when a dialect renders it.
   * Stopping the iteration early (client gone) aborts the upstream and settles what was used.
   */
  readonly events: AsyncIterable<StreamBatch>;
  readonly settlement: TextSettlement | undefined;
}

/**
 * A streaming text call, started: throws (nothing sent yet, the dialect answers with a normal
 * error) until a route produced its first event; after that, failures arrive as the terminal event.
 */
export async function streamText<Body>(pipeline: Pipeline, input: CallInput<TextTypes['request']>, render: RenderResult<TextTypes, Body>): Promise<StreamRun> {
  return streamPrepared(pipeline, await pipeline.prepare(TEXT, input), render);
}

/** The streaming driver of a metered call (./metered-call.ts): the call settles and records what the stream delivered. */
export async function streamPrepared<Body>(pipeline: Pipeline, prepared: PreparedCall<TextTypes>, render: RenderResult<TextTypes, Body>): Promise<StreamRun> {
  const metered = pipeline.meteredCall(prepared);
  // The run aborts the upstream itself when its consumer stops early, not only on disconnect.
  // Not AbortSignal.any: a composite signal with an abort listener is held by the runtime until
  // it aborts, and with it the whole finished stream (one leak per streamed request).
  const upstream = new AbortController();
  const client = prepared.signal;
  if (client.aborted) upstream.abort(client.reason);
  else client.addEventListener('abort', () => upstream.abort(client.reason), { once: true });
  // A stopping server cuts the streams still running at its deadline (http/drain.ts): the reason,
  // a GatewayError, is what the client is told in the stream. Until it has ended, the stream is
  // in the server's list of open streams, so that the server closes its connection only after it.
  const streamsCut = pipeline.streamsCut;
  const listed = streamsCut?.opened({ cut: (reason) => upstream.abort(reason) });
  const ended = () => {
    if (listed !== undefined) streamsCut?.ended(listed);
  };
  const signal = upstream.signal;
  prepared.trace?.expectRecord();
  try {
    const opened = await openStreamWithFallback(metered.attemptContext(signal), (endpoint, context) =>
      metered.protocolFor(endpoint).stream(prepared.request, endpoint, context),
    );
    crashPoint('attempted');
    return new PipelineStream({
      pipeline,
      metered,
      opened,
      call: metered.servedCall(opened.endpoint),
      render,
      signal,
      abortUpstream: () => upstream.abort(),
      ended,
    });
  } catch (error) {
    ended();
    throw await metered.fail(error);
  }
}

interface PipelineStreamInput<Body> {
  readonly pipeline: Pipeline;
  readonly metered: MeteredCall<TextTypes>;
  readonly opened: OpenedStream;
  readonly call: TextCall;
  readonly render: RenderResult<TextTypes, Body>;
  readonly signal: AbortSignal;
  readonly abortUpstream: () => void;
  /** Called once the stream is over (settled and logged). */
  readonly ended: () => void;
}

/** Every stream's hold deadline, on one timer (./deadlines.ts). */
const holdDeadlines = new Deadlines();

type Ending =
  | { readonly kind: 'finished'; readonly finish: Finish }
  | { readonly kind: 'failed'; readonly error: GatewayError }
  | { readonly kind: 'cancelled' };

export class PipelineStream<Body> implements StreamRun {
  readonly call: TextCall;
  readonly events: AsyncIterable<StreamBatch>;
  #settled: TextSettlement | undefined;
  readonly #input: PipelineStreamInput<Body>;
  readonly #accumulator = new StreamAccumulator();
  #firstByteMs: number | null = null;
  /** Set when the events start being consumed, or when the run is abandoned before that. */
  #started = false;
  /** Set once a batch was handed to the client's response: its status line (200) has gone out. */
  #delivered = false;
  readonly #holdWatch: HoldWatch;
  /** Passes shortly before the hold expires: a stream still running then is ended and settled. */
  readonly #holdDeadline: Link<Deadline>;
  /** Set when the hold's deadline ended the stream: the error its client is sent. */
  #outlived: GatewayError | undefined;
  /** The one settlement, whoever asks for it first. */
  #settling: Promise<void> | undefined;

  constructor(input: PipelineStreamInput<Body>) {
    this.#input = input;
    this.call = input.call;
    const { pipeline, metered, opened } = input;
    const { prepared } = metered;
    this.#holdWatch = new HoldWatch({
      maxOutputTokens: maxOutputTokens(prepared.request, opened.endpoint),
      hold: prepared.hold.reservation.amount,
      promptTokens: () => prepared.estimate.tokens,
      price: (usage) => metered.price(opened.endpoint, textMeter(prepared.request, opened.endpoint, usage, undefined, false)),
    });
    const lifetime = prepared.hold.reservation.expiresAt - pipeline.now();
    this.#holdDeadline = holdDeadlines.add({ at: performance.now() + Math.max(0, lifetime - settleMargin(lifetime)), passed: () => void this.#outliveHold() });
    // One generator: the events can be consumed once, so the request is settled and logged once.
    this.events = this.#run();
    // A generator that never started runs no `finally`: a client gone before the first event was
    // read would leave the reservation open until it expires. Settle it now instead.
    input.signal.addEventListener('abort', () => void this.#abandonUnstarted(), { once: true });
  }

  get settlement(): TextSettlement | undefined {
    return this.#settled;
  }

  async #abandonUnstarted(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    this.#holdDeadline.remove();
    await this.#cancel();
    this.#log({ kind: 'cancelled' });
  }

  /**
   * The hold is about to expire, and an expired hold can no longer be charged (docs/billing.md,
   * "Money caps"): the stream is settled now for what it delivered, its upstream is read no
   * further, and its client gets the error when it reads next.
   */
  async #outliveHold(): Promise<void> {
    if (this.#settling) return;
    const error = errors.streamOutlivedHold();
    this.#outlived = error;
    this.#input.abortUpstream();
    await this.#finish({ kind: 'failed', error });
  }

  /** Stops the upstream and bills what was used. */
  async #cancel(): Promise<void> {
    this.#input.abortUpstream();
    await this.#input.opened.stream.close();
    await this.#finish({ kind: 'cancelled' });
  }

  async *#run(): AsyncGenerator<StreamBatch> {
    if (this.#started) return;
    this.#started = true;
    const { opened, signal } = this.#input;
    let ending: Ending | undefined;
    try {
      let pending: StreamBatch | undefined = opened.firstEvents;
      while (pending !== undefined) {
        for (const event of pending) {
          this.#accumulator.observe(event);
          this.#holdWatch.observe(event);
          if (event.type === 'finish') ending = { kind: 'finished', finish: event.finish };
          else if (event.type === 'error') ending = { kind: 'failed', error: event.error };
          else this.#firstByteMs ??= performance.now() - this.#input.metered.prepared.startedAt;
        }
        let events: StreamBatch = pending;
        // An upstream that went on past what the hold pays for is read no further (./hold-watch.ts).
        if (!ending && this.#holdWatch.exhausted(this.#accumulator.usage)) {
          const error = errors.holdExhausted();
          ending = { kind: 'failed', error };
          events = [...pending, { type: 'error', error }];
        }
        // Settled before the terminal event is handed out, so that a dialect can render the charge.
        if (ending) await this.#finish(ending);
        this.#delivered = true;
        yield events;
        if (ending) return;
        if (!this.#outlived) {
          if (signal.aborted && this.#cutReason() === undefined) return;
          try {
            pending = await opened.stream.next();
          } catch (error) {
            pending = [{ type: 'error', error: asGatewayError(error) }];
          }
          if (!this.#outlived && signal.aborted) {
            // The client left (nothing to tell), or the stopping server cut the stream (told in it).
            const cut = this.#cutReason();
            if (cut === undefined) return;
            pending = [{ type: 'error', error: cut }];
          }
        }
        // Whatever arrived after the hold's deadline is not forwarded: the stream was settled without it.
        if (this.#outlived) pending = [{ type: 'error', error: this.#outlived }];
      }
    } finally {
      this.#holdDeadline.remove();
      if (!ending) {
        // The consumer stopped (client gone) or the upstream was aborted.
        ending = { kind: 'cancelled' };
        await this.#cancel();
      } else {
        await opened.stream.close();
      }
      this.#log(ending);
    }
  }

  /** Settles once: from the provider's usage when the stream finished, else from what was produced. */
  #finish(ending: Ending): Promise<void> {
    this.#settling ??= this.#settle(ending);
    return this.#settling;
  }

  async #settle(ending: Ending): Promise<void> {
    const { metered, opened } = this.#input;
    const { prepared } = metered;
    const accumulator = this.#accumulator;
    const succeeded = ending.kind === 'finished';
    const usage =
      succeeded && accumulator.usage ? accumulator.usage : usageOfUnfinishedStream(accumulator.usage, prepared.estimate.tokens, accumulator.streamedOutput());
    try {
      const meter = textMeter(prepared.request, opened.endpoint, usage, accumulator.webSearch, succeeded, accumulator.reportedUsage);
      // A stream has no gate: what it delivered is charged (a client gone mid-stream pays for what it was sent).
      this.#settled = await metered.settle(metered.meter(opened.endpoint, meter));
    } catch (error) {
      // The ledger is unreachable: the reservation stays open and expires; the client still gets its stream.
      metered.logger.error({ err: error, requestId: prepared.requestId }, 'stream settlement failed');
    }
  }

  /** The error a stopping server cut the stream with, when that is why its upstream was aborted. */
  #cutReason(): GatewayError | undefined {
    const cutWith = this.#input.pipeline.streamsCut?.cutWith;
    return cutWith !== undefined && this.#input.signal.reason === cutWith ? cutWith : undefined;
  }

  #log(ending: Ending): void {
    const { metered, opened, render, call } = this.#input;
    this.#input.ended();
    // The endpoint's health (routing/endpoint-health.ts): a stream is judged by how it ended. One
    // that outlived its hold says nothing of the endpoint: its client may have been the slow one.
    if (ending.kind === 'finished') opened.record?.succeeded(this.#accumulator.usage?.outputTokens);
    else if (ending.kind === 'failed' && ending.error !== this.#outlived) opened.record?.failed(ending.error, false);
    else opened.record?.abandoned();
    if (ending.kind === 'failed') {
      // The only trace of a failure after the first byte, since no fallback logs it. The cause says
      // what failed (a malformed event carries its body, cut short: protocols/wire-schema.ts); the
      // prompt and the credentials are never in it.
      const { endpoint } = opened;
      metered.logger.warn(
        {
          requestId: metered.prepared.requestId,
          provider: endpoint.provider.id,
          upstreamModel: endpoint.upstreamModel,
          status: ending.error.status,
          code: ending.error.code,
          err: ending.error.cause,
        },
        'stream failed after it had started',
      );
    }
    const settlement = this.#settled;
    const finish: Finish = ending.kind === 'finished' ? ending.finish : { reason: 'error', raw: ending.kind === 'cancelled' ? 'cancelled' : ending.error.code };
    const output = settlement ? render(this.#accumulator.result(finish, settlement.usage), call, settlement) : null;
    void metered.record({
      status: ending.kind === 'finished' ? (ending.finish.reason === 'length' ? 'incomplete' : 'completed') : ending.kind === 'failed' ? 'failed' : 'cancelled',
      // 200 once the stream had started: the client received that status line, whatever came later.
      // 499 when the client left before anything was sent (docs/operations.md, "Logs").
      httpStatus: this.#delivered ? 200 : 499,
      endpoint: opened.endpoint,
      ...(settlement && metered.settled(opened.endpoint, settlement)),
      errorCode: ending.kind === 'failed' ? ending.error.code : null,
      output,
      firstByteMs: this.#firstByteMs,
    });
  }
}

/**
 * How long before its hold expires a stream is ended: a tenth of the hold's lifetime, at most 30
 * seconds, so that the settlement reaches the ledger while the hold is still open.
 */
function settleMargin(lifetimeMs: number): number {
  return Math.min(30_000, Math.floor(lifetimeMs / 10));
}
