/**
 * The dashboard's heavy reads (usage and its export, the request and job lists, the health page)
 * take at most a small share of the instance they run on, so that an operator's dashboard, or a
 * script reading it in a loop, never slows the requests the instance serves (docs/dashboard.md,
 * "What the dashboard costs the gateway"). They run one at a time, and after a read that took `t`
 * the next starts no sooner than `t × (1 − share) / share` later (at most MAX_PAUSE_MS): reads back
 * to back then take at most `share` of the instance's time. A single read is never slowed; reads
 * beyond MAX_WAITING in line are refused with a 503 to retry shortly.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../core/errors.ts';

/** The share of an instance's time the dashboard's heavy reads may take when no setting says. */
export const DEFAULT_READ_SHARE = 0.02;
/** The longest pause after one read: a long export does not hold the next page back for minutes. */
export const MAX_PAUSE_MS = 1_000;
/** Reads waiting their turn beyond which another is refused. */
export const MAX_WAITING = 32;

/** The pacer's clock: milliseconds from any origin, and a wait of so many of them. */
export interface PacerClock {
  now(): number;
  sleep(ms: number): Promise<unknown>;
}

const MONOTONIC: PacerClock = { now: () => performance.now(), sleep };

export class ReadPacer {
  readonly #share: number;
  readonly #clock: PacerClock;
  #tail: Promise<void> = Promise.resolve();
  #waiting = 0;
  /** The clock's time before which the next read does not start. */
  #nextAt = Number.NEGATIVE_INFINITY;

  constructor(share: number, clock: PacerClock = MONOTONIC) {
    this.#share = share;
    this.#clock = clock;
  }

  async run<T>(read: () => Promise<T>): Promise<T> {
    if (this.#waiting >= MAX_WAITING) throw errors.serverBusy('too many dashboard reads are waiting', 1);
    this.#waiting += 1;
    const previous = this.#tail;
    let done!: () => void;
    this.#tail = new Promise((resolve) => {
      done = resolve;
    });
    try {
      await previous;
      const clock = this.#clock;
      const wait = this.#nextAt - clock.now();
      if (wait > 0) await clock.sleep(wait);
      const started = clock.now();
      try {
        return await read();
      } finally {
        const ended = clock.now();
        this.#nextAt = ended + Math.min(MAX_PAUSE_MS, ((ended - started) * (1 - this.#share)) / this.#share);
      }
    } finally {
      this.#waiting -= 1;
      done();
    }
  }
}
