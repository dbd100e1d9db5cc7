import { newReservation, walletKey } from '../rows.ts';
import type { Balance, HoldOwner, OwnerRef, Reservation, ReserveInput } from '../store.ts';

/** How long a reservation may stay open in memory only before it is written as open. */
export const WRITE_OPEN_AFTER_MS = 1_000;
/**
 * A wallet without open holds stays held this long after its last use: a client sending one
 * request at a time has no hold at most group commits, and its wallet row would otherwise be read
 * again on nearly every request. Idle wallets are dropped so that memory follows the active owners.
 */
export const IDLE_WALLET_MS = 60_000;

/** A wallet row as the database holds it. */
export interface WalletRow {
  readonly balance: bigint;
  readonly reserved: bigint;
}

/** One owner's wallet as this process knows it: the row plus what is not written yet. */
interface HeldWallet {
  readonly key: string;
  readonly owner: OwnerRef;
  balance: bigint;
  /** Every open hold: those on the row plus `unwritten`. */
  reserved: bigint;
  /** Holds of reservations not written yet (not on the row). */
  unwritten: bigint;
  /** Open reservations on this wallet that this process holds. */
  holds: number;
  /** What the next group adds to the row. */
  balanceDelta: bigint;
  reservedDelta: bigint;
  /** When a request last used it (for dropping idle wallets). */
  usedAt: number;
}

/** An open reservation this process holds. */
export interface HeldReservation {
  readonly reservation: Reservation;
  readonly wallet: HeldWallet;
  /** Whether its row exists (as open) in the database. */
  written: boolean;
}

export type ClosingStatus = 'settled' | 'released';

interface Closing {
  readonly held: HeldReservation;
  readonly status: ClosingStatus;
  readonly closedAt: number;
  readonly charged: bigint;
  readonly requestId: string | null;
}

/** The statements a write runs, in the order the book calls them. */
export interface BookWrites {
  /** A new reservation row: open (closedAt null) or already closed. */
  insertReservation(reservation: Reservation, status: 'open' | ClosingStatus, closedAt: number | null): void;
  /** Closes a reservation row written as open earlier. */
  closeReservation(reservationId: string, status: ClosingStatus, closedAt: number): void;
  /** A charge entry (amount > 0) for a settled reservation. */
  insertCharge(reservation: Reservation, amount: bigint, requestId: string | null, at: number): void;
  /** Adds the deltas to an owner's wallet row. */
  applyDeltas(owner: OwnerRef, balanceDelta: bigint, reservedDelta: bigint): void;
}

export interface WalletBookOptions {
  /** The holder of the reservations the book makes for no other holder: this process's instance. */
  readonly holder: HoldOwner;
  readonly now: () => number;
  /** The owner's wallet row; undefined when there is no such owner. */
  readonly readWallet: (owner: OwnerRef) => WalletRow | undefined;
  /** Asks for `write` to run in the next group commit (asking again before it ran does nothing). */
  readonly requestWrite: () => void;
  /** Calls `wake` once, `delayMs` from now; the book never has more than one wake pending. */
  readonly wakeAfter: (delayMs: number, wake: () => void) => void;
}

export class WalletBook {
  readonly #options: WalletBookOptions;
  readonly #wallets = new Map<string, HeldWallet>();
  /** Open reservations of this process, oldest first. */
  readonly #open = new Map<string, HeldReservation>();
  /** What the open reservations of each key hold together (a key's spend caps count it on every capped hold). */
  readonly #heldByKey = new Map<string, bigint>();
  #closings: Closing[] = [];
  readonly #dirty = new Set<HeldWallet>();
  /** Reservations written as open by the write being committed (unwritten again if it is lost). */
  #writtenInGroup: HeldReservation[] = [];
  /** Job holds to write as open in the next group (see the top of this file). */
  #writeNext: HeldReservation[] = [];
  #wakePending = false;
  #idleCheckAt = 0;
  readonly #wake = () => {
    this.#wakePending = false;
    this.#options.requestWrite();
  };

  constructor(options: WalletBookOptions) {
    this.#options = options;
  }

  /** The owner's balance as held in memory; undefined when the wallet is not held. */
  balance(owner: OwnerRef): Balance | undefined {
    const wallet = this.#wallets.get(walletKey(owner));
    if (!wallet) return undefined;
    return { balance: wallet.balance, reserved: wallet.reserved, available: wallet.balance - wallet.reserved };
  }

  /** The conditional hold: null when there is no such owner or its available balance is short. */
  reserve(input: ReserveInput): Reservation | null {
    const wallet = this.#held(input.owner);
    if (!wallet) return null;
    if (wallet.balance - wallet.reserved < input.amount) {
      // A refused owner is not kept in memory: only wallets in use are.
      if (wallet.holds === 0 && !this.#dirty.has(wallet)) this.#wallets.delete(wallet.key);
      return null;
    }
    const reservation = newReservation(input, input.holder ?? this.#options.holder, this.#options.now());
    wallet.reserved += input.amount;
    wallet.unwritten += input.amount;
    wallet.holds += 1;
    const entry: HeldReservation = { reservation, wallet, written: false };
    this.#opened(entry);
    if (reservation.holder?.kind === 'job') {
      this.#writeNext.push(entry);
      this.#options.requestWrite();
    } else this.#scheduleOpenWrites();
    return reservation;
  }

  /**
   * The holds of a key's open reservations this process holds: every one it made, and those of an
   * earlier run it took over (a background job's hold is taken over when its job resumes).
   */
  openHoldsOfKey(keyId: string): bigint {
    return this.#heldByKey.get(keyId) ?? 0n;
  }

  #opened(entry: HeldReservation): void {
    const { id, keyId, amount } = entry.reservation;
    this.#open.set(id, entry);
    if (keyId !== null) this.#heldByKey.set(keyId, (this.#heldByKey.get(keyId) ?? 0n) + amount);
  }

  /** An open reservation this process holds, or undefined. */
  open(reservationId: string): HeldReservation | undefined {
    return this.#open.get(reservationId);
  }

  /**
   * Takes over a reservation found open in the database (written by an earlier run of the process).
   * Its hold is part of the wallet row's `reserved`, so the held wallet already counts it.
   */
  adopt(reservation: Reservation): HeldReservation {
    const wallet = this.#held(reservation.owner)!;
    wallet.holds += 1;
    const entry: HeldReservation = { reservation, wallet, written: true };
    this.#opened(entry);
    return entry;
  }

  /**
   * Closes an open reservation, charging at most what its hold plus the free balance cover (never
   * below the other open reservations, nor below zero); returns what was charged.
   */
  close(entry: HeldReservation, status: ClosingStatus, cost: bigint, requestId: string | null): bigint {
    const { wallet, reservation } = entry;
    // Never above the reservation (docs/billing.md, "Money caps"), nor above what it and the free balance cover.
    const free = wallet.balance - wallet.reserved + reservation.amount;
    const covered = free < reservation.amount ? free : reservation.amount;
    const charged = cost <= covered ? cost : covered;
    wallet.balance -= charged;
    wallet.reserved -= reservation.amount;
    wallet.holds -= 1;
    wallet.balanceDelta -= charged;
    if (entry.written) wallet.reservedDelta -= reservation.amount;
    else wallet.unwritten -= reservation.amount;
    this.#dirty.add(wallet);
    this.#open.delete(reservation.id);
    if (reservation.keyId !== null) {
      const held = this.#heldByKey.get(reservation.keyId)! - reservation.amount;
      if (held === 0n) this.#heldByKey.delete(reservation.keyId);
      else this.#heldByKey.set(reservation.keyId, held);
    }
    this.#closings.push({ held: entry, status, closedAt: this.#options.now(), charged, requestId: requestId ?? reservation.requestId });
    this.#options.requestWrite();
    return charged;
  }

  /** Releases the open reservations this process holds whose expiry is before `at`; returns how many. */
  releaseExpired(at: number): number {
    let released = 0;
    for (const entry of [...this.#open.values()]) {
      if (entry.reservation.expiresAt < at) {
        this.close(entry, 'released', 0n, null);
        released += 1;
      }
    }
    return released;
  }

  /** A credit committed to the owner's row (by this process): a held wallet follows it. */
  credited(owner: OwnerRef, amount: bigint): void {
    const wallet = this.#wallets.get(walletKey(owner));
    if (wallet) wallet.balance += amount;
  }

  /** Open reservation rows of the owner released in the database (by this process): a held wallet follows. */
  rowsReleased(owner: OwnerRef, amount: bigint): void {
    const wallet = this.#wallets.get(walletKey(owner));
    if (wallet) wallet.reserved -= amount;
  }

  /**
   * Takes each held wallet's balance and written holds from its row (after a commit by another
   * process, or after a lost write); a wallet without open holds is dropped and read when next
   * used. Everything pending must have been written first.
   */
  resync(): void {
    for (const wallet of this.#wallets.values()) {
      wallet.balanceDelta = 0n;
      wallet.reservedDelta = 0n;
      const row = wallet.holds === 0 ? undefined : this.#options.readWallet(wallet.owner);
      if (!row) {
        this.#wallets.delete(wallet.key);
        continue;
      }
      wallet.balance = row.balance;
      wallet.reserved = row.reserved + wallet.unwritten;
    }
  }

  /** Hands what is pending to `writes` (inside the group's transaction). */
  write(writes: BookWrites): void {
    this.#writtenInGroup = [];
    this.#writeOpen(writes);
    const batch = this.#closings;
    this.#closings = [];
    for (const { held: entry, status, closedAt, charged, requestId } of batch) {
      const { reservation } = entry;
      if (entry.written) writes.closeReservation(reservation.id, status, closedAt);
      else writes.insertReservation(reservation, status, closedAt);
      if (charged > 0n) writes.insertCharge(reservation, charged, requestId, closedAt);
    }
    for (const wallet of this.#dirty) {
      writes.applyDeltas(wallet.owner, wallet.balanceDelta, wallet.reservedDelta);
      wallet.balanceDelta = 0n;
      wallet.reservedDelta = 0n;
    }
    this.#dirty.clear();
    this.#dropIdleWallets();
    this.#scheduleOpenWrites();
  }

  /**
   * The group that the last `write` ran in was rolled back (a failing disk): its closings and
   * charges are gone; the reservations it wrote as open are unwritten again, and the wallets must
   * be read again (resync, which this does).
   */
  lost(): void {
    for (const entry of this.#writtenInGroup) {
      entry.written = false;
      entry.wallet.unwritten += entry.reservation.amount;
    }
    this.#writtenInGroup = [];
    this.#dirty.clear();
    this.resync();
    this.#scheduleOpenWrites();
  }

  /** The held wallet of an owner, read from its row on first use; undefined when there is no such owner. */
  #held(owner: OwnerRef): HeldWallet | undefined {
    const key = walletKey(owner);
    const known = this.#wallets.get(key);
    if (known) {
      known.usedAt = this.#options.now();
      return known;
    }
    const row = this.#options.readWallet(owner);
    if (!row) return undefined;
    const wallet: HeldWallet = {
      key,
      owner,
      balance: row.balance,
      reserved: row.reserved,
      unwritten: 0n,
      holds: 0,
      balanceDelta: 0n,
      reservedDelta: 0n,
      usedAt: this.#options.now(),
    };
    this.#wallets.set(key, wallet);
    return wallet;
  }

  /**
   * Writes as open the job holds made since the last write and the reservations open for
   * WRITE_OPEN_AFTER_MS (the map is oldest first).
   */
  #writeOpen(writes: BookWrites): void {
    const jobHolds = this.#writeNext;
    this.#writeNext = [];
    for (const entry of jobHolds) {
      // A hold closed meanwhile is written in its final state with the closings.
      if (!entry.written && this.#open.has(entry.reservation.id)) this.#writeAsOpen(writes, entry);
    }
    const writtenBefore = this.#options.now() - WRITE_OPEN_AFTER_MS;
    for (const entry of this.#open.values()) {
      if (entry.written) continue;
      if (entry.reservation.createdAt > writtenBefore) break;
      this.#writeAsOpen(writes, entry);
    }
  }

  #writeAsOpen(writes: BookWrites, entry: HeldReservation): void {
    const { reservation, wallet } = entry;
    writes.insertReservation(reservation, 'open', null);
    entry.written = true;
    this.#writtenInGroup.push(entry);
    wallet.unwritten -= reservation.amount;
    wallet.reservedDelta += reservation.amount;
    this.#dirty.add(wallet);
  }

  /** Drops, at most once per IDLE_WALLET_MS, the wallets unused for that long (nothing of them is unwritten). */
  #dropIdleWallets(): void {
    const at = this.#options.now();
    if (at < this.#idleCheckAt) return;
    this.#idleCheckAt = at + IDLE_WALLET_MS;
    for (const wallet of this.#wallets.values()) {
      if (wallet.holds === 0 && wallet.usedAt <= at - IDLE_WALLET_MS) this.#wallets.delete(wallet.key);
    }
  }

  /** Asks to be woken when the oldest unwritten reservation comes of age. */
  #scheduleOpenWrites(): void {
    if (this.#wakePending) return;
    for (const entry of this.#open.values()) {
      if (entry.written) continue;
      this.#wakePending = true;
      this.#options.wakeAfter(Math.max(0, entry.reservation.createdAt + WRITE_OPEN_AFTER_MS - this.#options.now()), this.#wake);
      return;
    }
  }
}
