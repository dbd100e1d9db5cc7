/**
 * The credit ledger on SQLite. The wallet row carries the running balance and the sum of open
 * reservations; every change to it happens in the same transaction as the ledger entry or the
 * reservation change that explains it, so both stay derivable from the history at any time.
 * Reservations and settlements join the group commit (database.ts); credit grants and the sweeper
 * commit at once.
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
import type { LedgerStore, OwnerRef } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

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
  const hold = database.prepare(
    `UPDATE wallets SET reserved = reserved + :amount
     WHERE owner_kind = :owner_kind AND owner_id = :owner_id AND balance - reserved >= :amount`,
  );
  const insertReservation = database.prepare(
    `INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, created_at, expires_at)
     VALUES (:id, :owner_kind, :owner_id, :amount, :request_id, 'open', :created_at, :expires_at)
     RETURNING *`,
    { bigints: true },
  );
  // Only an open reservation closes, once: the status change is what makes settle and release idempotent.
  const closeReservation = database.prepare(
    "UPDATE reservations SET status = :status, closed_at = :closed_at WHERE id = :id AND status = 'open' RETURNING *",
    { bigints: true },
  );
  const chargeWallet = database.prepare(
    `UPDATE wallets SET balance = balance - :charged, reserved = reserved - :amount
     WHERE owner_kind = :owner_kind AND owner_id = :owner_id`,
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

  function releaseHold(owner: OwnerRef, amount: bigint): void {
    chargeWallet.run({ owner_kind: owner.kind, owner_id: owner.id, charged: 0n, amount });
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
      const row = database.grouped(() => {
        const held = hold.run({ owner_kind: owner.kind, owner_id: owner.id, amount });
        if (held.changes === 0) return undefined;
        return insertReservation.get({
          id: timeOrderedId('res'),
          owner_kind: owner.kind,
          owner_id: owner.id,
          amount,
          request_id: requestId,
          created_at: now(),
          expires_at: expiresAt,
        }) as Row;
      });
      return row ? reservationFromRow(row) : null;
    },

    async settle(reservationId, cost, requestId = null) {
      checkAmount('cost', cost, 0n);
      return database.grouped(() => {
        const at = now();
        const closed = closeReservation.get({ id: reservationId, status: 'settled', closed_at: at }) as Row | undefined;
        if (!closed) return null;
        const reservation = reservationFromRow(closed);
        const { balance, reserved } = balanceFromRow(wallet.get(reservation.owner.kind, reservation.owner.id) as Row);
        // Charge at most what this reservation plus the owner's free balance covers, so that
        // the balance never drops below the other open reservations (nor below zero).
        const ceiling = balance - reserved + reservation.amount;
        const charged = cost < ceiling ? cost : ceiling;
        chargeWallet.run({
          owner_kind: reservation.owner.kind,
          owner_id: reservation.owner.id,
          charged,
          amount: reservation.amount,
        });
        if (charged > 0n) {
          insertEntry.run({
            id: timeOrderedId('led'),
            owner_kind: reservation.owner.kind,
            owner_id: reservation.owner.id,
            kind: 'charge',
            amount: charged,
            reservation_id: reservationId,
            request_id: requestId ?? reservation.requestId,
            note: null,
            created_at: at,
          });
        }
        return settleOutcome(cost, reservation.amount, charged);
      });
    },

    async release(reservationId) {
      return database.grouped(() => {
        const closed = closeReservation.get({ id: reservationId, status: 'released', closed_at: now() }) as Row | undefined;
        if (!closed) return false;
        const reservation = reservationFromRow(closed);
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
