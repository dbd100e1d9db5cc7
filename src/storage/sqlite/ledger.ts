/**
 * The credit ledger on SQLite. The wallet row carries the running balance and the sum of open
 * reservations; every change to it happens in the same transaction as the ledger entry or the
 * reservation change that explains it, so both stay derivable from the history at any time.
 * Reservations and settlements join the group commit (database.ts); credit grants and the sweeper
 * commit at once. The statements of the request path bind positional parameters and return no
 * rows they do not need: on a few microseconds per statement, binding by name and RETURNING were
 * half the cost.
 *
 * Two more statements per request are saved without trusting memory over the database: the
 * reservations this process opened are remembered (owner, amount and request never change), so
 * closing one needs no SELECT — the UPDATE on `status = 'open'` still decides, atomically, whether
 * it was open; and a charge that fits its reservation plus the free balance, the usual case, is one
 * conditional UPDATE, with the balance read only when the charge must be capped.
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
import type { LedgerStore, OwnerRef, Reservation } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

/** What settling or releasing needs of a reservation it has just closed. */
interface ClosedReservation {
  readonly owner: OwnerRef;
  readonly amount: bigint;
  readonly requestId: string | null;
}

export function sqliteLedger(database: SqliteDatabase, now: () => number): LedgerStore {
  const wallet = database.prepare('SELECT balance, reserved FROM wallets WHERE owner_kind = ? AND owner_id = ?', {
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
  // (amount, owner_kind, owner_id)
  const hold = database.prepare(
    `UPDATE wallets SET reserved = reserved + ?1
     WHERE owner_kind = ?2 AND owner_id = ?3 AND balance - reserved >= ?1`,
  );
  // (id, owner_kind, owner_id, amount, request_id, created_at, expires_at)
  const insertReservation = database.prepare(
    `INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?, 'open', ?, ?)`,
  );
  const openReservation = database.prepare(
    "SELECT owner_kind, owner_id, amount, request_id FROM reservations WHERE id = ? AND status = 'open'",
    { bigints: true },
  );
  // (status, closed_at, id). Only an open reservation closes, once: the status change is what makes
  // settle and release idempotent.
  const closeReservation = database.prepare("UPDATE reservations SET status = ?, closed_at = ? WHERE id = ? AND status = 'open'");
  // (cost, amount, owner_kind, owner_id): applies only when the balance covers the whole cost.
  const chargeInFull = database.prepare(
    `UPDATE wallets SET balance = balance - ?1, reserved = reserved - ?2
     WHERE owner_kind = ?3 AND owner_id = ?4 AND balance - reserved + ?2 >= ?1`,
  );
  // (charged, amount, owner_kind, owner_id)
  const chargeWallet = database.prepare(
    'UPDATE wallets SET balance = balance - ?, reserved = reserved - ? WHERE owner_kind = ? AND owner_id = ?',
  );
  // (id, owner_kind, owner_id, amount, reservation_id, request_id, created_at)
  const insertCharge = database.prepare(
    `INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, note, created_at)
     VALUES (?, ?, ?, 'charge', ?, ?, ?, NULL, ?)`,
  );
  const expiredTotals = database.prepare(
    `SELECT owner_kind, owner_id, SUM(amount) AS amount FROM reservations
     WHERE status = 'open' AND expires_at < ? GROUP BY owner_kind, owner_id`,
    { bigints: true },
  );
  const releaseExpired = database.prepare(
    "UPDATE reservations SET status = 'released', closed_at = :now WHERE status = 'open' AND expires_at < :now",
  );
  const reservationById = database.prepare('SELECT * FROM reservations WHERE id = ?', { bigints: true });
  const entries = database.prepare('SELECT * FROM ledger_entries WHERE owner_kind = ? AND owner_id = ? ORDER BY id', {
    bigints: true,
  });

  /** Reservations opened by this process and not yet closed through it. */
  const opened = new Map<string, ClosedReservation>();

  function releaseHold(owner: OwnerRef, amount: bigint): void {
    chargeWallet.run(0n, amount, owner.kind, owner.id);
  }

  /** Closes an open reservation as `status`; null when it is not open. */
  function close(reservationId: string, status: 'settled' | 'released', at: number): ClosedReservation | null {
    const known = opened.get(reservationId);
    if (known) {
      opened.delete(reservationId);
      // Another process (the sweeper of another instance, say) may have closed it meanwhile.
      return closeReservation.run(status, at, reservationId).changes === 1 ? known : null;
    }
    const row = openReservation.get(reservationId) as Row | undefined;
    if (!row) return null;
    closeReservation.run(status, at, reservationId);
    return {
      owner: { kind: row.owner_kind as OwnerRef['kind'], id: row.owner_id as string },
      amount: row.amount as bigint,
      requestId: row.request_id as string | null,
    };
  }

  return {
    async addCredit(owner, amount, note = null) {
      checkAmount('credit', amount, 1n);
      const row = database.transaction(() => {
        const updated = credit.run({ owner_kind: owner.kind, owner_id: owner.id, amount });
        if (updated.changes === 0) {
          if (!wallet.get(owner.kind, owner.id)) throw ownerNotFound(owner);
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
      return ledgerEntryFromRow(row);
    },

    async getBalance(owner) {
      return balanceFromRow(wallet.get(owner.kind, owner.id) as Row | undefined);
    },

    async reserve({ owner, amount, requestId, expiresAt }) {
      checkAmount('reservation', amount, 0n);
      return database.grouped(() => {
        const held = hold.run(amount, owner.kind, owner.id);
        if (held.changes === 0) return null;
        const reservation: Reservation = {
          id: timeOrderedId('res'),
          owner,
          amount,
          requestId,
          status: 'open',
          createdAt: now(),
          expiresAt,
        };
        insertReservation.run(reservation.id, owner.kind, owner.id, amount, requestId, reservation.createdAt, expiresAt);
        opened.set(reservation.id, { owner, amount, requestId });
        return reservation;
      });
    },

    async settle(reservationId, cost, requestId = null) {
      checkAmount('cost', cost, 0n);
      return database.grouped(() => {
        const at = now();
        const reservation = close(reservationId, 'settled', at);
        if (!reservation) return null;
        let charged = cost;
        if (chargeInFull.run(cost, reservation.amount, reservation.owner.kind, reservation.owner.id).changes === 0) {
          const { balance, reserved } = balanceFromRow(wallet.get(reservation.owner.kind, reservation.owner.id) as Row);
          // Charge at most what this reservation plus the owner's free balance covers, so that
          // the balance never drops below the other open reservations (nor below zero).
          charged = balance - reserved + reservation.amount;
          chargeWallet.run(charged, reservation.amount, reservation.owner.kind, reservation.owner.id);
        }
        if (charged > 0n) {
          const { kind, id } = reservation.owner;
          insertCharge.run(timeOrderedId('led'), kind, id, charged, reservationId, requestId ?? reservation.requestId, at);
        }
        return settleOutcome(cost, reservation.amount, charged);
      });
    },

    async release(reservationId) {
      return database.grouped(() => {
        const reservation = close(reservationId, 'released', now());
        if (!reservation) return false;
        releaseHold(reservation.owner, reservation.amount);
        return true;
      });
    },

    async releaseExpired(at) {
      return database.transaction(() => {
        for (const row of expiredTotals.all(at) as Row[]) {
          releaseHold({ kind: row.owner_kind as OwnerRef['kind'], id: row.owner_id as string }, row.amount as bigint);
        }
        return Number(releaseExpired.run({ now: at }).changes);
      });
    },

    async getReservation(reservationId) {
      const row = reservationById.get(reservationId) as Row | undefined;
      return row ? reservationFromRow(row) : null;
    },

    async listEntries(owner) {
      return (entries.all(owner.kind, owner.id) as Row[]).map(ledgerEntryFromRow);
    },
  };
}
