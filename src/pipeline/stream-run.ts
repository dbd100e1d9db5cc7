/**
 * A started stream: forwards the route's canonical events, settles the request exactly once when
 * the stream finishes, fails or is abandoned by its consumer, and writes the request log row.
 *
 * What a stream costs (docs/billing.md): a finished stream is billed from the provider's final
 * usage; a stream cut off by an upstream failure or by the client is billed for the prompt and the
 * output generated up to that point (billing/partial-usage.ts). The upstream call is aborted as
 * soon as the client goes away, so nothing generated after that is billed.
 */
import { performance } from 'node:perf_hooks';
import { BatchCollector, type Finish, type StreamBatch } from '../canonical/index.ts';
import { errors, type GatewayError } from '../core/errors.ts';
import { usageOfUnfinishedStream } from '../billing/partial-usage.ts';
import { asGatewayError } from '../routing/fallback.ts';
import { StreamAccumulator } from './accumulate.ts';
import { closeQuietly, type OpenedStream } from './attempts.ts';
import type { Pipeline, PreparedRequest } from './pipeline.ts';
import type { RenderResult, ServedCall, Settlement, StreamRun } from './types.ts';

export interface PipelineStreamInput<T> {
  readonly pipeline: Pipeline;
  readonly prepared: PreparedRequest;
  readonly opened: OpenedStream;
  readonly call: ServedCall;
  readonly render: RenderResult<T>;
  readonly signal: AbortSignal;
  readonly abortUpstream: () => void;
}

type Ending =
  | { readonly kind: 'finished'; readonly finish: Finish }
  | { readonly kind: 'failed'; readonly error: GatewayError }
  | { readonly kind: 'cancelled' };

export class PipelineStream<T> implements StreamRun {
  readonly call: ServedCall;
  readonly events: AsyncIterable<StreamBatch>;
  private settled: Settlement | undefined;
  private readonly input: PipelineStreamInput<T>;
  private readonly accumulator = new StreamAccumulator();
  private firstByteMs: number | null = null;
  /** Set when the events start being consumed, or when the run is abandoned before that. */
  private started = false;

  constructor(input: PipelineStreamInput<T>) {
    this.input = input;
    this.call = input.call;
    // One generator: the events can be consumed once, so the request is settled and logged once.
    this.events = this.run();
    // A generator that never started runs no `finally`: a client gone before the first event was
    // read would leave the reservation open until it expires. Settle it now instead.
    input.signal.addEventListener('abort', () => void this.abandonUnstarted(), { once: true });
  }

  get settlement(): Settlement | undefined {
    return this.settled;
  }

  private async abandonUnstarted(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.cancel();
    this.log({ kind: 'cancelled' });
  }

  /** Stops the upstream and bills what was used. */
  private async cancel(): Promise<void> {
    this.input.abortUpstream();
    await closeQuietly(this.input.opened.iterator);
    await this.finish({ kind: 'cancelled' });
  }

  private async *run(): AsyncGenerator<StreamBatch> {
    if (this.started) return;
    this.started = true;
    const { opened, signal } = this.input;
    let ending: Ending | undefined;
    try {
      let pending: StreamBatch = opened.firstEvents;
      while (true) {
        const batch = new BatchCollector();
        for (const raw of pending) {
          const event = raw.type === 'finish' && raw.finish.reason === 'error' ? { type: 'error' as const, error: errors.upstreamErrorFinish(raw.finish.raw) } : raw;
          this.accumulator.observe(event);
          if (event.type === 'finish' || event.type === 'error') {
            ending = event.type === 'finish' ? { kind: 'finished', finish: event.finish } : { kind: 'failed', error: event.error };
          } else {
            this.firstByteMs ??= performance.now() - this.input.prepared.startedAt;
          }
          batch.push(event);
          if (ending) break;
        }
        // Settled before the terminal event is handed out, so that a dialect can render the charge.
        if (ending) await this.finish(ending);
        const events = batch.take();
        if (events !== undefined) yield events;
        if (ending) return;
        if (signal.aborted) return;
        let step: IteratorResult<StreamBatch>;
        try {
          step = await opened.iterator.next();
        } catch (error) {
          if (signal.aborted) return;
          step = { done: false, value: [{ type: 'error', error: asGatewayError(error) }] };
        }
        if (signal.aborted) return;
        pending = step.done ? [{ type: 'error', error: errors.upstreamEndedEarly() }] : step.value;
      }
    } finally {
      if (!ending) {
        // The consumer stopped (client gone) or the upstream was aborted.
        ending = { kind: 'cancelled' };
        await this.cancel();
      } else {
        await closeQuietly(opened.iterator);
      }
      this.log(ending);
    }
  }

  /** Settles once: from the provider's usage when the stream finished, else from what was produced. */
  private async finish(ending: Ending): Promise<void> {
    const { pipeline, prepared, opened } = this.input;
    const accumulator = this.accumulator;
    const succeeded = ending.kind === 'finished';
    const usage =
      succeeded && accumulator.usage
        ? accumulator.usage
        : usageOfUnfinishedStream(accumulator.usage, prepared.prompt.tokens, accumulator.streamedOutput());
    try {
      this.settled = await pipeline.settle(prepared, opened.endpoint, usage, accumulator.webSearch, succeeded);
    } catch (error) {
      // The ledger is unreachable: the reservation stays open and expires; the client still gets its stream.
      pipeline.logger.error({ err: error, requestId: prepared.input.requestId }, 'stream settlement failed');
    }
  }

  private log(ending: Ending): void {
    const { pipeline, prepared, opened, render, call } = this.input;
    const settlement = this.settled;
    const finish: Finish = ending.kind === 'finished' ? ending.finish : { reason: 'error', raw: ending.kind === 'cancelled' ? 'cancelled' : ending.error.code };
    const output = settlement ? render(this.accumulator.result(finish, settlement.usage), call, settlement) : null;
    pipeline.record(prepared, {
      status: ending.kind === 'finished' ? (ending.finish.reason === 'length' ? 'incomplete' : 'completed') : ending.kind === 'failed' ? 'failed' : 'cancelled',
      // The status line was 200: the stream had started before anything went wrong.
      httpStatus: 200,
      endpoint: opened.endpoint,
      settlement,
      errorCode: ending.kind === 'failed' ? ending.error.code : null,
      output,
      firstByteMs: this.firstByteMs,
    });
  }
}
