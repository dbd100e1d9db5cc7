/**
 * Deadlines of many open streams on one timer. A stream's deadline is far off (shortly before its
 * hold expires, minutes away) and almost never reached: a timer of its own cost every stream its
 * creation and its removal, for nothing. Here the timer is armed for the earliest deadline known
 * when it was armed; a deadline removed before it passes is only unlinked (a list, not a `Set`:
 * core/linked-list.ts), and a timer that fires for a removed one finds nothing due and is armed
 * again for the earliest left.
 */
import { performance } from 'node:perf_hooks';
import { type Link, LinkedList } from '../core/linked-list.ts';

export interface Deadline {
  /** When it passes, on the clock of the {@link Deadlines} that watch it (`performance.now()`'s by default). */
  readonly at: number;
  /** Called once when it passes, unless removed before. */
  passed(): void;
}

export class Deadlines {
  readonly #now: () => number;
  readonly #pending = new LinkedList<Deadline>();
  #timer: NodeJS.Timeout | undefined;
  /** What the timer is armed for (Infinity when it is not armed). */
  #armedFor = Number.POSITIVE_INFINITY;

  /** @param now The clock the deadlines are read on (monotonic by default; tests give one they move). */
  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Watches `deadline` until it passes or its link is removed. */
  add(deadline: Deadline): Link<Deadline> {
    const link = this.#pending.add(deadline);
    if (deadline.at < this.#armedFor) this.#arm(deadline.at);
    return link;
  }

  get size(): number {
    return this.#pending.size;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedFor = at;
    // The timer holds no process open: the streams' connections do.
    this.#timer = setTimeout(this.#fire, Math.max(0, at - this.#now())).unref();
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#armedFor = Number.POSITIVE_INFINITY;
    const now = this.#now();
    let next = Number.POSITIVE_INFINITY;
    const due: Link<Deadline>[] = [];
    for (const link of this.#pending.links()) {
      if (link.value.at <= now) due.push(link);
      else if (link.value.at < next) next = link.value.at;
    }
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
    for (const link of due) {
      link.remove();
      link.value.passed();
    }
  };
}
