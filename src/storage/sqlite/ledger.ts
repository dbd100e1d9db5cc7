/**
 * The credit ledger on SQLite: decided in memory, written behind.
 *
 * The embedded store has one server process per file (lock.ts), so the process can hold the
 * truth about the wallets it is using: each wallet's balance and open reservations live in
 * memory (the "held" state below), a reservation or a settlement is decided there synchronously —
 * atomic, because nothing else runs meanwhile — and the statements that record it run later, in
 * the next group commit (database.ts), together with everything else of the same milliseconds.
 * The request path executes no statement: on a few microseconds per statement, the ledger's six
 * per request were the largest cost of a request (docs/performance.md).
 *
 * What is written, and when:
 * - a reservation closed before it was ever written (most requests) is written once, in its final
 *   state, with its charge; its hold never reaches the wallet row;
 * - a reservation still open WRITE_OPEN_AFTER_MS after it was made (a long stream, a queued job) is
 *   written as open, with its hold on the wallet row, so that a crash leaves it to the expiry
 *   sweeper and a restarted process can still settle it;
 * - each wallet row receives one UPDATE per group with the sum of its changes.
 * A crash loses the last group's writes (a few milliseconds), as any group commit does: those
 * requests are then not charged, never charged twice. The wallet rows never hold more than the
 * balance covers: the CHECKs of the schema stay true.
 *
 * Other processes (the `gateway` command) may credit the file while the server runs: credits are
 * relative UPDATEs, so nothing is overwritten, and the ledger re-reads the wallets it holds when
 * SQLite reports a commit by another connection (at most CHANGE_CHECK_MS apart).
 */
import { timeOrderedId } from '../../core/ids.ts';
import {
  INT64_MAX,
  balanceFromRow,
  checkAmount,
  ledgerEntryFromRow,
  overflowError,
  ownerNotFound,
  reservationFromRow,
  settleOutcome,
  type Row,
} from '../rows.ts';
import type { Balance, LedgerStore, OwnerRef, Reservation } from '../store.ts';
import type { DeferredWriter, SqliteDatabase } from './database.ts';

/** How long a reservation may stay open in memory only before it is written as open. */
export const WRITE_OPEN_AFTER_MS = 1_000;
/** How often, at most, the request path asks SQLite whether another process committed. */
const CHANGE_CHECK_MS = 100;
/**
 * A wallet without open holds stays held this long after its last use: a client sending one
 * request at a time has no hold at most group commits, and its wallet row would otherwise be read
 * again on nearly every request. Idle wallets are dropped so that memory follows the active owners.
 */
const IDLE_WALLET_MS = 60_000;

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

interface HeldReservation {
  readonly reservation: Reservation;
  readonly wallet: HeldWallet;
  /** Whether its row exists (as open) in the database. */
  written: boolean;
}

interface Closing {
  readonly held: HeldReservation;
  readonly status: 'settled' | 'released';
  readonly closedAt: number;
  readonly charged: bigint;
  readonly requestId: string | null;
}

export function sqliteLedger(database: SqliteDatabase, now: () => number): LedgerStore {
  return database.shared('ledger', () => createLedger(database, now));
}

function createLedger(database: SqliteDatabase, now: () => number): LedgerStore {
  const walletRow = database.prepare('SELECT balance, reserved FROM wallets WHERE owner_kind = ? AND owner_id = ?', {
    bigints: true,
  });
  // SQLite turns an overflowing integer sum into a float, so the headroom is checked in the WHERE.
  const credit = database.prepare(
    `UPDATE wallets SET balance = balance + :amount
     WHERE owner_kind = :owner_kind AND owner_id = :owner_id AND balance <= ${INT64_MAX} - :amount`,
  );
  const insertEntry = database.prepare(
    `INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, note, created_at)
     VALUES (:id, :owner_kind, :owner_id, :kind, :amount, :reservation_id, :request_id, :note, :created_at)
     RETURNING *`,
    { bigints: true },
  );
  // Positional parameters below: binding by name costs a lookup per column on every row.
  // (id, owner_kind, owner_id, amount, request_id, status, created_at, expires_at, closed_at)
  const insertReservation = database.prepare(
    `INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, created_at, expires_at, closed_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // (status, closed_at, id)
  const closeWritten = database.prepare("UPDATE reservations SET status = ?, closed_at = ? WHERE id = ? AND status = 'open'");
  // (id, owner_kind, owner_id, amount, reservation_id, request_id, created_at)
  const insertCharge = database.prepare(
    `INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, note, created_at)
     VALUES (?, ?, ?, 'charge', ?, ?, ?, NULL, ?)`,
  );
  // (balance delta, reserved delta, owner_kind, owner_id)
  const applyDeltas = database.prepare(
    'UPDATE wallets SET balance = balance + ?, reserved = reserved + ? WHERE owner_kind = ? AND owner_id = ?',
  );
  const openRow = database.prepare("SELECT * FROM reservations WHERE id = ? AND status = 'open'", { bigints: true });
  const expiredTotals = database.prepare(
    `SELECT owner_kind, owner_id, SUM(amount) AS amount FROM reservations
     WHERE status = 'open' AND expires_at < ? GROUP BY owner_kind, owner_id`,
    { bigints: true },
  );
  const releaseExpiredRows = database.prepare(
    "UPDATE reservations SET status = 'released', closed_at = :now WHERE status = 'open' AND expires_at < :now",
  );
  const reservationById = database.prepare('SELECT * FROM reservations WHERE id = ?', { bigints: true });
  const entries = database.prepare('SELECT * FROM ledger_entries WHERE owner_kind = ? AND owner_id = ? ORDER BY id', {
    bigints: true,
  });

  const wallets = new Map<string, HeldWallet>();
  /** Open reservations of this process, oldest first. */
  const open = new Map<string, HeldReservation>();
  let closings: Closing[] = [];
  const dirty = new Set<HeldWallet>();
  /** Reservations written as open by the group being committed (unwritten again if it is lost). */
  let writtenInGroup: HeldReservation[] = [];
  let writeOpenTimer: NodeJS.Timeout | undefined;
  let changesCheckedAt = 0;

  const walletKey = (owner: OwnerRef) => `${owner.kind}:${owner.id}`;

  function readRow(owner: OwnerRef): { balance: bigint; reserved: bigint } | undefined {
    return walletRow.get(owner.kind, owner.id) as { balance: bigint; reserved: bigint } | undefined;
  }

  /** The held wallet of an owner, read from its row on first use; undefined when there is no such owner. */
  function held(owner: OwnerRef): HeldWallet | undefined {
    const key = walletKey(owner);
    const known = wallets.get(key);
    if (known) {
      known.usedAt = now();
      return known;
    }
    const row = readRow(owner);
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
      usedAt: now(),
    };
    wallets.set(key, wallet);
    return wallet;
  }

  /**
   * Re-reads the held wallets when another process committed (a credit from the command line):
   * everything pending is written first, so each row then holds everything but the unwritten holds.
   */
  function noticeOtherWriters(): void {
    const at = now();
    if (at - changesCheckedAt < CHANGE_CHECK_MS) return;
    changesCheckedAt = at;
    if (database.changedElsewhere()) reread();
  }

  function reread(): void {
    database.flush();
    syncWithRows();
  }

  /**
   * Takes each held wallet's balance and written holds from its row (after a commit by another
   * process, or after a lost group); a wallet without open holds is dropped and read when next used.
   */
  function syncWithRows(): void {
    for (const wallet of wallets.values()) {
      wallet.balanceDelta = 0n;
      wallet.reservedDelta = 0n;
      const row = wallet.holds === 0 ? undefined : readRow(wallet.owner);
      if (!row) {
        wallets.delete(wallet.key);
        continue;
      }
      wallet.balance = row.balance;
      wallet.reserved = row.reserved + wallet.unwritten;
    }
  }

  /**
   * An open reservation by id: held in memory, or written by an earlier run of the process (read
   * after writing what is pending, so that a reservation closed in memory is not found open).
   */
  function openReservation(reservationId: string): HeldReservation | undefined {
    const known = open.get(reservationId);
    if (known) return known;
    database.flush();
    const row = openRow.get(reservationId) as Row | undefined;
    if (!row) return undefined;
    const reservation = reservationFromRow(row);
    // The row's hold is part of the wallet row's `reserved`, so the held wallet already counts it.
    const wallet = held(reservation.owner)!;
    wallet.holds += 1;
    const entry: HeldReservation = { reservation, wallet, written: true };
    open.set(reservationId, entry);
    return entry;
  }

  /** Closes an open reservation in memory, charging at most what its hold plus the free balance cover. */
  function close(entry: HeldReservation, status: Closing['status'], cost: bigint, requestId: string | null): bigint {
    const { wallet, reservation } = entry;
    const covered = wallet.balance - wallet.reserved + reservation.amount;
    // Never below the other open reservations, nor below zero.
    const charged = cost <= covered ? cost : covered;
    wallet.balance -= charged;
    wallet.reserved -= reservation.amount;
    wallet.holds -= 1;
    wallet.balanceDelta -= charged;
    if (entry.written) wallet.reservedDelta -= reservation.amount;
    else wallet.unwritten -= reservation.amount;
    dirty.add(wallet);
    open.delete(reservation.id);
    closings.push({ held: entry, status, closedAt: now(), charged, requestId: requestId ?? reservation.requestId });
    database.deferWrites(writer);
    return charged;
  }

  function writeOpenReservations(all: boolean): void {
    const writtenBefore = now() - WRITE_OPEN_AFTER_MS;
    for (const entry of open.values()) {
      if (entry.written) continue;
      const { reservation, wallet } = entry;
      if (!all && reservation.createdAt > writtenBefore) break;
      insertReservation.run(
        reservation.id,
        reservation.owner.kind,
        reservation.owner.id,
        reservation.amount,
        reservation.requestId,
        'open',
        reservation.createdAt,
        reservation.expiresAt,
        null,
      );
      entry.written = true;
      writtenInGroup.push(entry);
      wallet.unwritten -= reservation.amount;
      wallet.reservedDelta += reservation.amount;
      dirty.add(wallet);
    }
  }

  let idleCheckAt = 0;

  /** Drops, at most once per IDLE_WALLET_MS, the wallets unused for that long (nothing of them is unwritten). */
  function dropIdleWallets(): void {
    const at = now();
    if (at < idleCheckAt) return;
    idleCheckAt = at + IDLE_WALLET_MS;
    for (const wallet of wallets.values()) {
      if (wallet.holds === 0 && wallet.usedAt <= at - IDLE_WALLET_MS) wallets.delete(wallet.key);
    }
  }

  /** Wakes the writer when the oldest unwritten reservation comes of age. */
  function scheduleOpenWrites(): void {
    if (writeOpenTimer !== undefined) return;
    for (const entry of open.values()) {
      if (entry.written) continue;
      const delay = Math.max(0, entry.reservation.createdAt + WRITE_OPEN_AFTER_MS - now());
      writeOpenTimer = setTimeout(() => {
        writeOpenTimer = undefined;
        database.deferWrites(writer);
      }, delay);
      writeOpenTimer.unref();
      return;
    }
  }

  const writer: DeferredWriter = {
    write() {
      writtenInGroup = [];
      writeOpenReservations(false);
      const batch = closings;
      closings = [];
      for (const { held: entry, status, closedAt, charged, requestId } of batch) {
        const { reservation } = entry;
        const { kind, id } = reservation.owner;
        if (entry.written) closeWritten.run(status, closedAt, reservation.id);
        else {
          insertReservation.run(
            reservation.id, kind, id, reservation.amount, reservation.requestId, status, reservation.createdAt, reservation.expiresAt, closedAt,
          );
        }
        if (charged > 0n) insertCharge.run(timeOrderedId('led'), kind, id, charged, reservation.id, requestId, closedAt);
      }
      for (const wallet of dirty) {
        applyDeltas.run(wallet.balanceDelta, wallet.reservedDelta, wallet.owner.kind, wallet.owner.id);
        wallet.balanceDelta = 0n;
        wallet.reservedDelta = 0n;
      }
      dirty.clear();
      dropIdleWallets();
      scheduleOpenWrites();
    },
    lost() {
      // The group was rolled back (a failing disk): its closings and charges are gone; the
      // reservations it wrote as open are unwritten again, and the wallets are read again.
      for (const entry of writtenInGroup) {
        entry.written = false;
        entry.wallet.unwritten += entry.reservation.amount;
      }
      writtenInGroup = [];
      dirty.clear();
      syncWithRows();
      scheduleOpenWrites();
    },
  };

  function balanceOf(wallet: HeldWallet): Balance {
    return { balance: wallet.balance, reserved: wallet.reserved, available: wallet.balance - wallet.reserved };
  }

  return {
    async addCredit(owner, amount, note = null) {
      checkAmount('credit', amount, 1n);
      const row = database.transaction(() => {
        const updated = credit.run({ owner_kind: owner.kind, owner_id: owner.id, amount });
        if (updated.changes === 0) {
          if (!readRow(owner)) throw ownerNotFound(owner);
          throw overflowError(owner);
        }
        return insertEntry.get({
          id: timeOrderedId('led'),
          owner_kind: owner.kind,
          owner_id: owner.id,
          kind: 'credit',
          amount,
          reservation_id: null,
          request_id: null,
          note,
          created_at: now(),
        }) as Row;
      });
      const wallet = wallets.get(walletKey(owner));
      if (wallet) wallet.balance += amount;
      return ledgerEntryFromRow(row);
    },

    async getBalance(owner) {
      noticeOtherWriters();
      const wallet = wallets.get(walletKey(owner));
      return wallet ? balanceOf(wallet) : balanceFromRow(readRow(owner) as Row | undefined);
    },

    async reserve({ owner, amount, requestId, expiresAt }) {
      checkAmount('reservation', amount, 0n);
      noticeOtherWriters();
      const wallet = held(owner);
      if (!wallet) return null;
      if (wallet.balance - wallet.reserved < amount) {
        // A refused owner is not kept in memory: only wallets in use are.
        if (wallet.holds === 0 && !dirty.has(wallet)) wallets.delete(wallet.key);
        return null;
      }
      const reservation: Reservation = {
        id: timeOrderedId('res'),
        owner,
        amount,
        requestId,
        status: 'open',
        createdAt: now(),
        expiresAt,
      };
      wallet.reserved += amount;
      wallet.unwritten += amount;
      wallet.holds += 1;
      open.set(reservation.id, { reservation, wallet, written: false });
      scheduleOpenWrites();
      return reservation;
    },

    async settle(reservationId, cost, requestId = null) {
      checkAmount('cost', cost, 0n);
      const entry = openReservation(reservationId);
      if (!entry) return null;
      const charged = close(entry, 'settled', cost, requestId);
      return settleOutcome(cost, entry.reservation.amount, charged);
    },

    async release(reservationId) {
      const entry = openReservation(reservationId);
      if (!entry) return false;
      close(entry, 'released', 0n, null);
      return true;
    },

    async releaseExpired(at) {
      let released = 0;
      for (const entry of [...open.values()]) {
        if (entry.reservation.expiresAt < at) {
          close(entry, 'released', 0n, null);
          released += 1;
        }
      }
      // Then the rows left open by an earlier run of the process (after writing the closings above).
      return database.transaction(() => {
        for (const row of expiredTotals.all(at) as Row[]) {
          const owner = { kind: row.owner_kind as OwnerRef['kind'], id: row.owner_id as string };
          const amount = row.amount as bigint;
          applyDeltas.run(0n, -amount, owner.kind, owner.id);
          const wallet = wallets.get(walletKey(owner));
          if (wallet) wallet.reserved -= amount;
        }
        return released + Number(releaseExpiredRows.run({ now: at }).changes);
      });
    },

    async getReservation(reservationId) {
      const known = open.get(reservationId);
      if (known) return known.reservation;
      database.flush();
      const row = reservationById.get(reservationId) as Row | undefined;
      return row ? reservationFromRow(row) : null;
    },

    async listEntries(owner) {
      database.flush();
      return (entries.all(owner.kind, owner.id) as Row[]).map(ledgerEntryFromRow);
    },
  };
}
