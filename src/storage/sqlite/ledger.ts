/**
 * The credit ledger on SQLite: decided in memory, written behind.
 *
 * The embedded store has one server process per file (server-lock.ts), so the process can hold the
 * truth about the wallets it is using: the bookkeeping (wallet-book.ts) keeps each wallet's balance
 * and open reservations in memory and decides a reservation or a settlement there synchronously —
 * atomic, because nothing else runs meanwhile — and this module runs the statements that record it
 * later, in the next group commit (database.ts), together with everything else of the same
 * milliseconds. The request path executes no statement: on a few microseconds per statement, the
 * ledger's six per request were the largest cost of a request (docs/performance.md).
 *
 * A crash loses the last group's writes (a few milliseconds), as any group commit does: those
 * requests are then not charged, never charged twice.
 *
 * Other processes (the `gateway` command) may credit the file while the server runs: credits are
 * relative UPDATEs, so nothing is overwritten, and the ledger re-reads the wallets it holds when
 * SQLite reports a commit by another connection (at most CHANGE_CHECK_MS apart).
 */
import type { SQLInputValue, StatementSync } from 'node:sqlite';
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
import { capTimes, firstRefusal, type Spent } from '../spend.ts';
import type { LedgerStore, OwnerRef } from '../store.ts';
import type { DeferredWriter, SqliteDatabase } from './database.ts';
import { WalletBook, type BookWrites, type HeldReservation, type WalletRow } from './wallet-book.ts';

/** How often, at most, the request path asks SQLite whether another process committed. */
const CHANGE_CHECK_MS = 100;

export interface SqliteLedger extends LedgerStore {
  /** This process's instance: the holder of every reservation it makes. */
  readonly instanceId: string;
  /**
   * Releases every open reservation held by another instance; returns how many. Only for the file's
   * server, at start: its lock (server-lock.ts) proves that whoever made them is gone.
   */
  releaseHeldElsewhere(at: number): number;
}

export function sqliteLedger(database: SqliteDatabase, now: () => number): SqliteLedger {
  return database.shared('ledger', () => createLedger(database, now));
}

function createLedger(database: SqliteDatabase, now: () => number): SqliteLedger {
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
  // (id, owner_kind, owner_id, amount, request_id, status, holder_kind, holder_id, created_at, expires_at, closed_at, key_id)
  const insertReservation = database.prepare(
    `INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, holder_kind, holder_id, created_at, expires_at, closed_at, key_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // (status, closed_at, id)
  const closeWritten = database.prepare("UPDATE reservations SET status = ?, closed_at = ? WHERE id = ? AND status = 'open'");
  // (id, owner_kind, owner_id, amount, reservation_id, request_id, created_at, key_id)
  const insertCharge = database.prepare(
    `INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, note, created_at, key_id)
     VALUES (?, ?, ?, 'charge', ?, ?, ?, NULL, ?, ?)`,
  );
  // What a key was charged since each of three times, and what it holds in open rows (see spend.ts).
  const keySpend = database.prepare(
    `SELECT
       (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = ?1 AND kind = 'charge' AND created_at >= ?2) AS since_a,
       (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = ?1 AND kind = 'charge' AND created_at >= ?3) AS since_b,
       (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = ?1 AND kind = 'charge' AND created_at >= ?4) AS since_c,
       (SELECT coalesce(sum(amount), 0) FROM reservations WHERE key_id = ?1 AND status = 'open') AS held`,
    { bigints: true },
  );
  // What an owner was charged since each of three times; its open holds are its wallet's `reserved`.
  const ownerSpend = database.prepare(
    `SELECT
       (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_kind = ?1 AND owner_id = ?2 AND kind = 'charge' AND created_at >= ?3) AS since_a,
       (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_kind = ?1 AND owner_id = ?2 AND kind = 'charge' AND created_at >= ?4) AS since_b,
       (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_kind = ?1 AND owner_id = ?2 AND kind = 'charge' AND created_at >= ?5) AS since_c`,
    { bigints: true },
  );
  // (balance delta, reserved delta, owner_kind, owner_id)
  const applyDeltas = database.prepare('UPDATE wallets SET balance = balance + ?, reserved = reserved + ? WHERE owner_kind = ? AND owner_id = ?');
  const openRow = database.prepare("SELECT * FROM reservations WHERE id = ? AND status = 'open'", { bigints: true });
  // Open rows left by an earlier run of the process: expired, or held by a dead instance.
  const expiredTotals = database.prepare(
    `SELECT owner_kind, owner_id, SUM(amount) AS amount FROM reservations
     WHERE status = 'open' AND expires_at < :now GROUP BY owner_kind, owner_id`,
    { bigints: true },
  );
  const releaseExpiredRows = database.prepare("UPDATE reservations SET status = 'released', closed_at = :now WHERE status = 'open' AND expires_at < :now");
  // Rows without a holder were written by a version that recorded none; on SQLite they too come
  // from an earlier server.
  const HELD_ELSEWHERE = "status = 'open' AND (holder_kind IS NULL OR (holder_kind = 'instance' AND holder_id <> :instance))";
  const heldElsewhereTotals = database.prepare(
    `SELECT owner_kind, owner_id, SUM(amount) AS amount FROM reservations WHERE ${HELD_ELSEWHERE} GROUP BY owner_kind, owner_id`,
    { bigints: true },
  );
  // It shares releaseHeldElsewhereRows's parameters, of which it needs only some.
  heldElsewhereTotals.setAllowUnknownNamedParameters(true);
  const releaseHeldElsewhereRows = database.prepare(`UPDATE reservations SET status = 'released', closed_at = :now WHERE ${HELD_ELSEWHERE}`);
  const reservationById = database.prepare('SELECT * FROM reservations WHERE id = ?', { bigints: true });
  const entries = database.prepare('SELECT * FROM ledger_entries WHERE owner_kind = ? AND owner_id = ? ORDER BY id', {
    bigints: true,
  });

  function readRow(owner: OwnerRef): WalletRow | undefined {
    return walletRow.get(owner.kind, owner.id) as WalletRow | undefined;
  }

  /**
   * What keys and owners with spend caps were charged since each period start a cap asked about,
   * kept up to date by every settlement of this process (the only one writing charges to the file):
   * a capped hold then reads no statement. A sum not known yet is read once, after writing what is
   * pending, so that it counts every charge.
   */
  const spend = {
    sums: new Map<string, Map<number, bigint>>(),
    charged(scope: string, since: number, read: () => Row): bigint {
      let sums = this.sums.get(scope);
      if (!sums) this.sums.set(scope, (sums = new Map()));
      let sum = sums.get(since);
      if (sum === undefined) {
        database.flush();
        sum = BigInt(read().since_a as bigint);
        // The period starts a scope is asked about move on (a new day): older ones are dropped.
        if (sums.size >= 4) sums.delete(sums.keys().next().value!);
        sums.set(since, sum);
      }
      return sum;
    },
    add(reservation: { readonly keyId: string | null; readonly owner: OwnerRef }, charged: bigint, at: number): void {
      if (charged <= 0n || this.sums.size === 0) return;
      const scopes = [`owner:${reservation.owner.kind}:${reservation.owner.id}`];
      if (reservation.keyId) scopes.push(`key:${reservation.keyId}`);
      for (const scope of scopes) {
        const sums = this.sums.get(scope);
        if (!sums) continue;
        for (const [since, sum] of sums) if (at >= since) sums.set(since, sum + charged);
      }
    },
  };

  const instanceId = timeOrderedId('ins');
  const book = new WalletBook({
    holder: { kind: 'instance', id: instanceId },
    now,
    readWallet: readRow,
    requestWrite: () => database.deferWrites(writer),
    wakeAfter: (delayMs, wake) => setTimeout(wake, delayMs).unref(),
  });

  const writes: BookWrites = {
    insertReservation(reservation, status, closedAt) {
      const { owner, holder } = reservation;
      insertReservation.run(
        reservation.id,
        owner.kind,
        owner.id,
        reservation.amount,
        reservation.requestId,
        status,
        holder?.kind ?? null,
        holder?.id ?? null,
        reservation.createdAt,
        reservation.expiresAt,
        closedAt,
        reservation.keyId,
      );
    },
    closeReservation(reservationId, status, closedAt) {
      closeWritten.run(status, closedAt, reservationId);
    },
    insertCharge(reservation, amount, requestId, at) {
      insertCharge.run(timeOrderedId('led'), reservation.owner.kind, reservation.owner.id, amount, reservation.id, requestId, at, reservation.keyId);
    },
    applyDeltas(owner, balanceDelta, reservedDelta) {
      applyDeltas.run(balanceDelta, reservedDelta, owner.kind, owner.id);
    },
  };

  const writer: DeferredWriter = {
    write: () => book.write(writes),
    lost: () => book.lost(),
  };

  let changesCheckedAt = 0;

  /**
   * Re-reads the held wallets when another process committed (a credit from the command line):
   * everything pending is written first, so each row then holds everything but the unwritten holds.
   */
  function noticeOtherWriters(): void {
    const at = now();
    if (at - changesCheckedAt < CHANGE_CHECK_MS) return;
    changesCheckedAt = at;
    if (database.changedElsewhere()) {
      database.flush();
      book.resync();
    }
  }

  /**
   * An open reservation by id: held in memory, or written by an earlier run of the process (read
   * after writing what is pending, so that a reservation closed in memory is not found open).
   */
  function openReservation(reservationId: string): HeldReservation | undefined {
    const known = book.open(reservationId);
    if (known) return known;
    database.flush();
    const row = openRow.get(reservationId) as Row | undefined;
    return row ? book.adopt(reservationFromRow(row)) : undefined;
  }

  /**
   * Releases, in one transaction, the open rows that `totals` sums per owner and `rows` closes
   * (after writing the closings pending in memory); returns how many.
   */
  function releaseRows(totals: StatementSync, rows: StatementSync, parameters: Record<string, SQLInputValue>): number {
    return database.transaction(() => {
      for (const row of totals.all(parameters) as Row[]) {
        const owner = { kind: row.owner_kind as OwnerRef['kind'], id: row.owner_id as string };
        const amount = row.amount as bigint;
        applyDeltas.run(0n, -amount, owner.kind, owner.id);
        book.rowsReleased(owner, amount);
      }
      return Number(rows.run(parameters).changes);
    });
  }

  return {
    instanceId,

    releaseHeldElsewhere(at) {
      return releaseRows(heldElsewhereTotals, releaseHeldElsewhereRows, { instance: instanceId, now: at });
    },

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
      book.credited(owner, amount);
      return ledgerEntryFromRow(row);
    },

    async getBalance(owner) {
      noticeOtherWriters();
      return book.balance(owner) ?? balanceFromRow(readRow(owner) as Row | undefined);
    },

    async reserve(input) {
      checkAmount('reservation', input.amount, 0n);
      noticeOtherWriters();
      return book.reserve(input);
    },

    async reserveCapped(input) {
      checkAmount('reservation', input.amount, 0n);
      noticeOtherWriters();
      if (input.caps.length > 0) {
        // Everything from here to the hold runs synchronously, so nothing can spend in between.
        const times = capTimes(input.caps);
        const spentBy: { key?: Spent; organization?: Spent } = {};
        const keyId = input.keyId;
        if (keyId && input.caps.some((cap) => cap.holder === 'key')) {
          const since = times.map((at) => spend.charged(`key:${keyId}`, at, () => keySpend.get(keyId, at, at, at) as Row)) as [bigint, bigint, bigint];
          spentBy.key = { since, held: book.openHoldsOfKey(keyId) };
        }
        if (input.caps.some((cap) => cap.holder === 'organization')) {
          const { kind, id } = input.owner;
          const since = times.map((at) => spend.charged(`owner:${kind}:${id}`, at, () => ownerSpend.get(kind, id, at, at, at) as Row)) as [
            bigint,
            bigint,
            bigint,
          ];
          const held = book.balance(input.owner)?.reserved ?? readRow(input.owner)?.reserved ?? 0n;
          spentBy.organization = { since, held };
        }
        const refusal = firstRefusal(input.caps, input.amount, spentBy);
        if (refusal) return refusal;
      }
      const reservation = book.reserve(input);
      return reservation ? { reservation } : { refused: 'credit' };
    },

    async spentBy(holder, times) {
      database.flush();
      const sums = (row: Row): [bigint, bigint, bigint] => [BigInt(row.since_a as bigint), BigInt(row.since_b as bigint), BigInt(row.since_c as bigint)];
      if ('keyId' in holder) return { since: sums(keySpend.get(holder.keyId, ...times) as Row), held: book.openHoldsOfKey(holder.keyId) };
      const { owner } = holder;
      return {
        since: sums(ownerSpend.get(owner.kind, owner.id, ...times) as Row),
        held: book.balance(owner)?.reserved ?? readRow(owner)?.reserved ?? 0n,
      };
    },

    async settle(reservationId, cost, requestId = null) {
      checkAmount('cost', cost, 0n);
      const entry = openReservation(reservationId);
      if (!entry) return null;
      const charged = book.close(entry, 'settled', cost, requestId);
      spend.add(entry.reservation, charged, now());
      return settleOutcome(cost, entry.reservation.amount, charged);
    },

    async release(reservationId) {
      const entry = openReservation(reservationId);
      if (!entry) return false;
      book.close(entry, 'released', 0n, null);
      return true;
    },

    async releaseExpired(at) {
      // The reservations held in memory, then the rows left open by an earlier run of the process.
      return book.releaseExpired(at) + releaseRows(expiredTotals, releaseExpiredRows, { now: at });
    },

    async getReservation(reservationId) {
      const known = book.open(reservationId);
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
