/**
 * The canonical stream rules, enforced in this one place for every protocol (docs/architecture.md):
 * - a failure before the first event worth forwarding is thrown, so routing can still fall back
 *   (the opening `start`, and usage reported with it, are not worth forwarding: no answer yet);
 * - a `finish` whose reason is `error` is an error (the provider answered, so it is not retried);
 * - a stream that ends without its terminal `finish` or `error` ended early, which is an error;
 * - nothing after the terminal event is read.
 * A complete (non-streamed) result obeys the same finish rule.
 */
import { BatchCollector, type CanonicalResult, type StreamBatch, type StreamEvent } from '../canonical/index.ts';
import { errors } from '../core/errors.ts';

export function failOnErrorFinish(result: CanonicalResult): CanonicalResult {
  if (result.finish.reason === 'error') throw errors.upstreamErrorFinish(result.finish.raw);
  return result;
}

function checked(event: StreamEvent): StreamEvent {
  return event.type === 'finish' && event.finish.reason === 'error' ? { type: 'error', error: errors.upstreamErrorFinish(event.finish.raw) } : event;
}

const isTerminal = (event: StreamEvent): boolean => event.type === 'finish' || event.type === 'error';

/** A protocol's stream, read under the rules above. */
export class CheckedStream {
  readonly #iterator: AsyncIterator<StreamBatch>;
  #ended = false;

  constructor(iterator: AsyncIterator<StreamBatch>) {
    this.#iterator = iterator;
  }

  /**
   * Reads up to the first event worth forwarding (anything but `start` and `usage`), which it returns with
   * what came before and with it; a failure before it is thrown.
   */
  async first(): Promise<StreamBatch> {
    const events = new BatchCollector();
    let forwardable = false;
    while (!forwardable) {
      const step = await this.#iterator.next();
      if (step.done) throw errors.upstreamEndedEarly();
      for (const raw of step.value) {
        const event = checked(raw);
        if (event.type === 'error' && !forwardable) throw event.error;
        events.push(event);
        if (event.type !== 'start' && event.type !== 'usage') forwardable = true;
        if (isTerminal(event)) {
          this.#ended = true;
          break;
        }
      }
    }
    return events.take()!;
  }

  /**
   * The next batch, its events checked and cut after the terminal one; an early end is an `error`
   * event; undefined once the terminal event was read. A read that throws is the caller's to judge
   * (the client may have gone, which aborts the read).
   */
  async next(): Promise<StreamBatch | undefined> {
    if (this.#ended) return undefined;
    const step = await this.#iterator.next();
    if (step.done) {
      this.#ended = true;
      return [{ type: 'error', error: errors.upstreamEndedEarly() }];
    }
    return this.#checked(step.value);
  }

  /** The batch as it came (no copy) unless its terminal event is rewritten or followed by more. */
  #checked(batch: StreamBatch): StreamBatch {
    for (let index = 0; index < batch.length; index++) {
      const event = batch[index];
      if (!isTerminal(event)) continue;
      this.#ended = true;
      const terminal = checked(event);
      if (terminal === event && index === batch.length - 1) return batch;
      const cut = new BatchCollector();
      for (const before of batch.slice(0, index)) cut.push(before);
      cut.push(terminal);
      return cut.take()!;
    }
    return batch;
  }

  /** Stops the upstream read; a clean-up failure changes nothing for the client. */
  async close(): Promise<void> {
    try {
      await this.#iterator.return?.();
    } catch {
      // The upstream is being abandoned.
    }
  }
}
