/**
 * Credit leases: what makes a busy wallet cost PostgreSQL a few writes per commit instead of rows
 * per request (docs/billing.md, "Credit leases"). No SQL here: this is the bookkeeping of the slices
 * this instance holds; wallet-commits.ts carries what it decides to the database, in the wallet's
 * group commit.
 *
 * A slice is a reservation row of its own (marked `lease`, held by this instance), counted in the
 * wallet's `reserved` like any hold, so no other instance can spend it and the release of a lapsed
 * instance's holds returns it. Holds of this instance's own short requests are decided against the
 * slice in memory, synchronously; a settlement is decided there too (a charge never exceeds its
 * hold, so the slice always covers it) and written — the reservation in its final state and its
 * charge, paid out of the slice — in the wallet's next group commit, which the settlement waits for.
 *
 * How a slice is sized and given back:
 * - it is asked for only when this instance has had at least MIN_CONCURRENT holds open at once on
 *   the wallet within the last window, at twice the most credit its holds had open at once in the
 *   last window (two windows of WINDOW_MS); the database grants it whole or not at all, and only
 *   while it stays within 1/SHARE of what the wallet has available beside it, so that near the end
 *   of a balance there is no slice and every hold is decided in the database;
 * - it is topped up, before it runs dry, when what is left of it falls below half that size, and
 *   shrunk when it is more than twice it;
 * - it is given back whole when no hold has used it for IDLE_MS, and at stop;
 * - a hold the database refused while slices of the wallet were out recalls them (the wallet row
 *   records it): for RECALL_MS no slice grows and every instance gives back what its slice holds
 *   beyond its open holds at its next commit (an idle one gives it all back within IDLE_MS anyway).
 *
 * A hold that the slice does not cover (too large, or no slice) goes to the database as before.
 */
import { timeOrderedId } from '../../core/ids.ts';
import type { Picos } from '../../core/money.ts';
import { newReservation, walletKey } from '../rows.ts';
import type { OwnerRef, Reservation, ReserveInput } from '../store.ts';

/** A slice is asked for only after this many holds were open at once on the wallet. */
export const MIN_CONCURRENT = 4;
/** The demand of a wallet is the most held at once over the last two windows of this length. */
export const WINDOW_MS = 500;
/** A slice unused this long is given back. */
export const IDLE_MS = 200;
/** A slice never grows to more than 1/SHARE of what the wallet has available beside other holds. */
export const SHARE = 4;
/** How long slices stay recalled after a hold was refused while they were out. */
export const RECALL_MS = 1_000;
/** After a commit of the slice failed (the database unreachable), its own changes wait this long. */
const AFTER_FAILURE_MS = 1_000;
/** The expiry a slice's row carries at least (it is renewed at every commit that changes it). */
const SLICE_TERM_MS = 60_000;

/** A hold decided against the slice and closed: written in the next commit. */
export interface SliceClosing {
  readonly reservation: Reservation;
  /** The charge (at most the hold); null for a release. */
  readonly cost: Picos | null;
  readonly requestId: string | null;
  readonly entryId: string;
  readonly closedAt: number;
}

/** What one group commit carries for the slice of a wallet. */
export interface LeasePart {
  readonly id: string;
  /** The slice is asked for now (no row yet). */
  readonly isNew: boolean;
  /** Asked growth (> 0, granted whole or not at all) or what is given back (< 0, always applied). */
  readonly change: Picos;
  /** Given back whole: the row is closed once its amount is 0. */
  readonly close: boolean;
  readonly expiresAt: number;
  readonly closings: readonly SliceClosing[];
}

/** What the database answered for the slice part of a commit. */
export interface LeaseOutcome {
  /** The slice's amount after the commit; null when there is none (refused, closed, or released under it). */
  readonly amount: Picos | null;
  /** The charges written for the closings, by reservation id (none when the slice was gone). */
  readonly charged: ReadonlyMap<string, Picos>;
  /** Whether slices of the wallet are recalled. */
  readonly recalled: boolean;
}

export type SliceSettlement = { readonly amount: Picos; readonly charged: Picos } | null;

interface PendingClosing extends SliceClosing {
  readonly resolve: (outcome: SliceSettlement) => void;
  readonly reject: (error: unknown) => void;
}

interface SentPart extends LeasePart {
  readonly closings: readonly PendingClosing[];
}

interface WalletLease {
  readonly key: string;
  readonly owner: OwnerRef;
  /** The slice's reservation id; null: none (or only asked for). */
  id: string | null;
  /** Whether the slice's row exists: holds may be decided against it. */
  granted: boolean;
  /** The slice's amount as of the last commit. */
  amount: bigint;
  /** Charges and give-backs taken from it that the database has not confirmed yet. */
  deducted: bigint;
  /** What the holds open against it hold. */
  inUse: bigint;
  readonly holds: Map<string, Reservation>;
  closings: PendingClosing[];
  /** The part of the commit in flight, if any. */
  sent: SentPart | null;
  /** Latest expiry of a hold decided against it. */
  expiresAt: number;
  lastUsedAt: number;
  recalledUntil: number;
  /** A growth (or a new slice) was refused: none is asked for again before this time. */
  deniedUntil: number;
  /** A commit failed: until then the slice changes only with the closings requests bring. */
  failedUntil: number;
  /** Every hold of this instance open on the wallet (slice or database), for the demand. */
  openCount: number;
  openAmount: bigint;
  windowStart: number;
  peakCount: number;
  peakAmount: bigint;
  previousPeakCount: number;
  previousPeakAmount: bigint;
  idleWake: boolean;
}

export interface CreditLeasesOptions {
  /** This instance: the holder of its slices and of the holds decided against them. */
  readonly instanceId: string;
  readonly now: () => number;
  /** Asks for a group commit of the wallet (wallet-commits.ts), which then calls `take`. */
  readonly requestCommit: (owner: OwnerRef) => void;
  /** A timer: `wake` once, after `delayMs` (the idle slices' return). */
  readonly wakeAfter: (delayMs: number, wake: () => void) => void;
}

export class CreditLeases {
  /** The wallet of each hold decided against a slice, by reservation id. */
  readonly #holds = new Map<string, WalletLease>();
  readonly #wallets = new Map<string, WalletLease>();
  readonly #options: CreditLeasesOptions;
  #stopping = false;
  #drained: (() => void) | null = null;

  constructor(options: CreditLeasesOptions) {
    this.#options = options;
  }

  /**
   * A hold decided against this instance's slice of the wallet; undefined when the slice does not
   * cover it (or there is none, or the hold is not this instance's own), and it goes to the database.
   */
  hold(input: ReserveInput): Reservation | undefined {
    if (input.holder && (input.holder.kind !== 'instance' || input.holder.id !== this.#options.instanceId)) return undefined;
    const lease = this.#wallets.get(walletKey(input.owner));
    const now = this.#options.now();
    // While the database fails the slice's commits, a request would be served and then fail to be
    // charged: it goes to the database instead, and fails there before its upstream call.
    if (!lease?.granted || this.#stopping || now < lease.failedUntil) return undefined;
    if (lease.amount - lease.deducted - lease.inUse < input.amount) {
      this.#maybeCommit(lease, now);
      return undefined;
    }
    const reservation = newReservation(input, { kind: 'instance', id: this.#options.instanceId }, now);
    lease.inUse += input.amount;
    lease.holds.set(reservation.id, reservation);
    this.#holds.set(reservation.id, lease);
    if (input.expiresAt > lease.expiresAt) lease.expiresAt = input.expiresAt;
    lease.lastUsedAt = now;
    this.#opened(lease, input.amount, now);
    this.#maybeCommit(lease, now);
    return reservation;
  }

  /** A hold of this instance on the wallet decided in the database (it counts in the demand). */
  heldInDatabase(owner: OwnerRef, amount: Picos): void {
    if (this.#stopping) return;
    const now = this.#options.now();
    const lease = this.#wallet(owner, now);
    this.#opened(lease, amount, now);
    this.#maybeCommit(lease, now);
  }

  /** A hold of this instance decided in the database is closed. */
  closedInDatabase(owner: OwnerRef, amount: Picos): void {
    const lease = this.#wallets.get(walletKey(owner));
    if (lease) this.#closed(lease, amount, this.#options.now());
  }

  /** The open hold decided against a slice, if `reservationId` is one. */
  reservation(reservationId: string): Reservation | undefined {
    return this.#holds.get(reservationId)?.holds.get(reservationId);
  }

  /**
   * Closes a hold decided against a slice: settles it (`cost`, capped at the hold) or releases it
   * (null). Undefined when it is no such open hold. The promise settles once the closing is written;
   * null when the slice was released under this instance meanwhile (nothing is charged).
   */
  close(reservationId: string, cost: Picos | null, requestId: string | null): Promise<SliceSettlement> | undefined {
    const lease = this.#holds.get(reservationId);
    const reservation = lease?.holds.get(reservationId);
    if (!lease || !reservation) return undefined;
    const now = this.#options.now();
    const charge = cost === null ? null : cost > reservation.amount ? reservation.amount : cost;
    lease.holds.delete(reservationId);
    this.#holds.delete(reservationId);
    lease.inUse -= reservation.amount;
    lease.deducted += charge ?? 0n;
    lease.lastUsedAt = now;
    const written = new Promise<SliceSettlement>((resolve, reject) => {
      lease.closings.push({
        reservation,
        cost: charge,
        requestId: requestId ?? reservation.requestId,
        entryId: timeOrderedId('led'),
        closedAt: now,
        resolve,
        reject,
      });
    });
    this.#closed(lease, reservation.amount, now);
    this.#options.requestCommit(lease.owner);
    return written;
  }

  /** Gives back, at the next commit, what this instance's slice holds beyond its open holds. */
  recall(owner: OwnerRef): void {
    const lease = this.#wallets.get(walletKey(owner));
    if (!lease) return;
    lease.recalledUntil = this.#options.now() + RECALL_MS;
    if (lease.granted) this.#options.requestCommit(owner);
  }

  /** Releases the holds decided against slices whose expiry is before `at`; returns how many. */
  releaseExpired(at: number): number {
    let released = 0;
    for (const lease of this.#wallets.values()) {
      for (const reservation of [...lease.holds.values()]) {
        if (reservation.expiresAt < at) {
          // A release that fails to be written leaves the hold in the slice, which goes back whole
          // when idle: nothing to do about it here.
          this.close(reservation.id, null, null)?.catch(() => undefined);
          released += 1;
        }
      }
    }
    return released;
  }

  /** Whether a commit of the wallet has something of the slice to carry. */
  pending(owner: OwnerRef): boolean {
    const lease = this.#wallets.get(walletKey(owner));
    return lease !== undefined && lease.sent === null && this.#plan(lease) !== null;
  }

  /** What the wallet's commit now being sent carries for the slice; null for nothing. */
  take(owner: OwnerRef): LeasePart | null {
    const lease = this.#wallets.get(walletKey(owner));
    if (!lease || lease.sent) return null;
    const plan = this.#plan(lease);
    if (!plan) return null;
    const part: SentPart = {
      id: lease.id ?? timeOrderedId('res'),
      isNew: lease.id === null,
      change: plan.change,
      close: plan.close,
      expiresAt: Math.max(lease.expiresAt, this.#options.now() + SLICE_TERM_MS),
      closings: lease.closings,
    };
    lease.id = part.id;
    lease.closings = [];
    // What is given back can no longer be held against, from now on.
    if (part.change < 0n) lease.deducted -= part.change;
    lease.sent = part;
    return part;
  }

  /** The database's answer to the part `take` gave. */
  committed(owner: OwnerRef, outcome: LeaseOutcome): void {
    const answered = this.#answered(owner);
    if (!answered) return;
    const { lease, part } = answered;
    const before = lease.granted ? lease.amount : 0n;
    if (outcome.amount === null) this.#gone(lease);
    else {
      lease.amount = outcome.amount;
      lease.granted = true;
    }
    if (part.change > 0n && (outcome.amount ?? 0n) - before < part.change - this.#charged(part)) {
      lease.deniedUntil = this.#options.now() + WINDOW_MS;
    }
    for (const closing of part.closings) {
      const charged = outcome.charged.get(closing.reservation.id);
      closing.resolve(charged === undefined ? null : { amount: closing.reservation.amount, charged });
    }
    if (outcome.recalled) lease.recalledUntil = this.#options.now() + RECALL_MS;
    this.#afterCommit(lease);
  }

  /** The commit carrying the part failed (rolled back): nothing of it was written. */
  failed(owner: OwnerRef, error: unknown): void {
    const answered = this.#answered(owner);
    if (!answered) return;
    const { lease, part } = answered;
    // A slice asked for may not exist; one that did keeps its amount (the closings were not written,
    // so their charges are still in it).
    if (part.isNew) lease.id = null;
    lease.failedUntil = this.#options.now() + AFTER_FAILURE_MS;
    for (const closing of part.closings) closing.reject(error);
    this.#afterCommit(lease);
  }

  /**
   * Stops deciding holds against slices and gives every slice back (after the holds still open
   * against them close, which the server's drain waits for), within `waitMs` at most.
   */
  async stop(waitMs: number): Promise<void> {
    this.#stopping = true;
    if (this.#allReturned()) return;
    const drained = new Promise<void>((resolve) => (this.#drained = resolve));
    for (const lease of this.#wallets.values()) this.#options.requestCommit(lease.owner);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
    clearTimeout(timer);
  }

  /** The part in flight, now answered: what it took from the slice is no longer pending. */
  #answered(owner: OwnerRef): { lease: WalletLease; part: SentPart } | null {
    const lease = this.#wallets.get(walletKey(owner));
    const part = lease?.sent;
    if (!lease || !part) return null;
    lease.sent = null;
    lease.deducted -= this.#taken(part);
    return { lease, part };
  }

  #allReturned(): boolean {
    for (const lease of this.#wallets.values()) if (lease.id !== null || lease.closings.length > 0) return false;
    return true;
  }

  #charged(part: SentPart): bigint {
    let charged = 0n;
    for (const closing of part.closings) charged += closing.cost ?? 0n;
    return charged;
  }

  /** Charges and give-backs of a part, which `take` and `close` deducted. */
  #taken(part: SentPart): bigint {
    let taken = part.change < 0n ? -part.change : 0n;
    for (const closing of part.closings) taken += closing.cost ?? 0n;
    return taken;
  }

  /** The slice is gone (never granted, given back, or released under this instance). */
  #gone(lease: WalletLease): void {
    lease.id = null;
    lease.granted = false;
    lease.amount = 0n;
    lease.deducted = 0n;
    lease.inUse = 0n;
    // Holds decided against a slice released under this instance are no longer covered: closing
    // them charges nothing (as for any hold of an instance judged lapsed).
    for (const id of lease.holds.keys()) this.#holds.delete(id);
    lease.holds.clear();
  }

  #afterCommit(lease: WalletLease): void {
    if (this.#plan(lease)) this.#options.requestCommit(lease.owner);
    else if (lease.id !== null) this.#scheduleIdle(lease);
    if (lease.id === null && lease.openCount === 0 && lease.closings.length === 0) this.#wallets.delete(lease.key);
    if (this.#drained && this.#allReturned()) this.#drained();
  }

  /**
   * What the next commit should do with the slice: ask for one, grow it, shrink it, give it back, or
   * only write its closings. Null for nothing.
   */
  #plan(lease: WalletLease): { change: bigint; close: boolean } | null {
    const now = this.#options.now();
    const hasClosings = lease.closings.length > 0;
    // A database that just failed a commit is not asked again at once (the idle timer comes back).
    if (now < lease.failedUntil) return hasClosings ? { change: 0n, close: false } : null;
    if (lease.id === null) {
      if (!this.#mayGrow(lease, now) || this.#peakCount(lease, now) < MIN_CONCURRENT) return hasClosings ? { change: 0n, close: false } : null;
      const target = 2n * this.#peakAmount(lease, now);
      return target > 0n ? { change: target, close: false } : null;
    }
    if (!lease.granted) return hasClosings ? { change: 0n, close: false } : null;
    const left = lease.amount - lease.deducted;
    const free = left - lease.inUse;
    if (this.#stopping || (lease.holds.size === 0 && now - lease.lastUsedAt >= IDLE_MS)) {
      if (lease.holds.size === 0) return { change: -left, close: true };
      return free > 0n || hasClosings ? { change: -free, close: false } : null;
    }
    if (now < lease.recalledUntil) return free > 0n || hasClosings ? { change: -free, close: false } : null;
    const target = 2n * this.#peakAmount(lease, now);
    if (left * 2n < target && now >= lease.deniedUntil) return { change: target - left, close: false };
    if (left > 2n * target && free > 0n) {
      const surplus = left - target;
      return { change: -(surplus < free ? surplus : free), close: false };
    }
    return hasClosings ? { change: 0n, close: false } : null;
  }

  /** Asks for a commit when the plan has something to do beyond what the closings ask. */
  #maybeCommit(lease: WalletLease, now: number): void {
    if (lease.sent) return;
    if (!this.#mayGrow(lease, now)) return;
    if (lease.id === null) {
      if (this.#peakCount(lease, now) >= MIN_CONCURRENT) this.#options.requestCommit(lease.owner);
      return;
    }
    if (lease.granted && lease.amount - lease.deducted < this.#peakAmount(lease, now)) this.#options.requestCommit(lease.owner);
  }

  #mayGrow(lease: WalletLease, now: number): boolean {
    return !this.#stopping && now >= lease.recalledUntil && now >= lease.deniedUntil;
  }

  #scheduleIdle(lease: WalletLease): void {
    if (lease.idleWake) return;
    lease.idleWake = true;
    this.#options.wakeAfter(IDLE_MS, () => {
      lease.idleWake = false;
      if (lease.id !== null) {
        if (lease.sent === null && this.#plan(lease)) this.#options.requestCommit(lease.owner);
        else this.#scheduleIdle(lease);
      }
    });
  }

  #wallet(owner: OwnerRef, now: number): WalletLease {
    const key = walletKey(owner);
    let lease = this.#wallets.get(key);
    if (!lease) {
      lease = {
        key,
        owner,
        id: null,
        granted: false,
        amount: 0n,
        deducted: 0n,
        inUse: 0n,
        holds: new Map(),
        closings: [],
        sent: null,
        expiresAt: 0,
        lastUsedAt: now,
        recalledUntil: 0,
        deniedUntil: 0,
        failedUntil: 0,
        openCount: 0,
        openAmount: 0n,
        windowStart: now,
        peakCount: 0,
        peakAmount: 0n,
        previousPeakCount: 0,
        previousPeakAmount: 0n,
        idleWake: false,
      };
      this.#wallets.set(key, lease);
    }
    return lease;
  }

  #opened(lease: WalletLease, amount: bigint, now: number): void {
    this.#turnWindow(lease, now);
    lease.openCount += 1;
    lease.openAmount += amount;
    if (lease.openCount > lease.peakCount) lease.peakCount = lease.openCount;
    if (lease.openAmount > lease.peakAmount) lease.peakAmount = lease.openAmount;
  }

  #closed(lease: WalletLease, amount: bigint, now: number): void {
    this.#turnWindow(lease, now);
    lease.openCount -= 1;
    lease.openAmount -= amount;
    if (lease.id === null && lease.openCount === 0 && lease.closings.length === 0 && lease.sent === null) this.#wallets.delete(lease.key);
    else if (lease.id !== null && lease.holds.size === 0) this.#scheduleIdle(lease);
  }

  #turnWindow(lease: WalletLease, now: number): void {
    if (now - lease.windowStart < WINDOW_MS) return;
    const skipped = now - lease.windowStart >= 2 * WINDOW_MS;
    lease.previousPeakCount = skipped ? lease.openCount : lease.peakCount;
    lease.previousPeakAmount = skipped ? lease.openAmount : lease.peakAmount;
    lease.peakCount = lease.openCount;
    lease.peakAmount = lease.openAmount;
    lease.windowStart = now;
  }

  #peakCount(lease: WalletLease, now: number): number {
    this.#turnWindow(lease, now);
    return Math.max(lease.peakCount, lease.previousPeakCount);
  }

  #peakAmount(lease: WalletLease, now: number): bigint {
    this.#turnWindow(lease, now);
    return lease.peakAmount > lease.previousPeakAmount ? lease.peakAmount : lease.previousPeakAmount;
  }
}
