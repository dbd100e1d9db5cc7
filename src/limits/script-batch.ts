/**
 * Every counter operation of one event-loop turn, sent to Redis as ONE script call
 * (docs/limits.md, "How batching keeps it exact"). Requests handled in the same turn (under load,
 * tens of them) share one command, one socket write, one reply and one timer, so the cost of a
 * round trip is split among them; the script runs the operations one after the other, in the order
 * they were queued, and Redis runs the script atomically: the counts are exactly those of running
 * each operation alone, in that order.
 *
 * An operation is one text of comma-separated fields (the script parses it: one argument per
 * operation), and names its keys by their index in the call's KEYS, each distinct key once (the
 * requests of one API key share theirs). When the call fails (Redis away, no answer in time), every
 * operation of the batch fails with it.
 */

/** Runs one batch: the distinct keys and the operations; one answer per operation, in order. */
export type RunBatch = (keys: readonly string[], operations: readonly string[]) => Promise<unknown[]>;

/** Operations queued in one turn above this many go to the next call, to bound a script's run. */
const MAX_OPERATIONS = 1000;

/** The operations queued for one call. */
export class Batch {
  readonly #keys: string[] = [];
  readonly #keyIndex = new Map<string, number>();
  readonly #operations: string[] = [];
  readonly #answers: Promise<unknown[]>;
  #run!: (answers: Promise<unknown[]>) => void;

  constructor() {
    this.#answers = new Promise((resolve) => {
      this.#run = resolve;
    });
  }

  get size(): number {
    return this.#operations.length;
  }

  /** The 1-based index of a key in this call's KEYS, as the script reads it. */
  key(name: string): number {
    let index = this.#keyIndex.get(name);
    if (index === undefined) {
      index = this.#keys.push(name);
      this.#keyIndex.set(name, index);
    }
    return index;
  }

  /** Queues an operation; resolves to the script's answer for it, read by `read`. */
  call<T>(operation: string, read: (answer: unknown) => T): Promise<T> {
    const index = this.#operations.push(operation) - 1;
    return this.#answers.then((answers) => read(answers[index]));
  }

  /** Queues an operation whose answer is not needed: settles with the call (rejects when it failed). */
  send(operation: string): Promise<unknown> {
    this.#operations.push(operation);
    return this.#answers;
  }

  /** Sends the batch (once). */
  flush(run: RunBatch): void {
    try {
      this.#run(run(this.#keys, this.#operations));
    } catch (error) {
      this.#run(Promise.reject(error));
    }
  }
}

export class ScriptBatches {
  readonly #run: RunBatch;
  #open: Batch | undefined;

  constructor(run: RunBatch) {
    this.#run = run;
  }

  /**
   * The batch that is sent at the end of this turn (after the I/O callbacks of the turn have run,
   * https://nodejs.org/en/learn/asynchronous-work/event-loop-timers-and-nexttick): build an
   * operation with its `key` and queue it with `call` or `send`, synchronously.
   */
  current(): Batch {
    if (this.#open === undefined || this.#open.size >= MAX_OPERATIONS) {
      const batch = new Batch();
      this.#open = batch;
      setImmediate(() => {
        if (this.#open === batch) this.#open = undefined;
        batch.flush(this.#run);
      });
    }
    return this.#open;
  }
}
