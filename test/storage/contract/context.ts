import assert from 'node:assert/strict';
import type { OwnerRef, Store } from '../../../src/storage/store.ts';

export interface ContractContext {
  /** The store under test, open for the whole suite. */
  readonly store: () => Store;
  /** A second handle on the same database: another gateway instance. */
  readonly peer: () => Store;
  /** Opens one more handle on the same database (the caller closes it). */
  readonly open: () => Promise<Store>;
  /** An opener of a new, empty database: each call of it opens one more handle on that database. */
  readonly fresh: () => () => Promise<Store>;
}

export async function newAccount(store: Store, name = 'account'): Promise<OwnerRef> {
  const account = await store.createAccount({ name });
  return { kind: 'account', id: account.id };
}

export function sum(amounts: readonly bigint[]): bigint {
  return amounts.reduce((total, amount) => total + amount, 0n);
}

/**
 * The ledger identities: balance = Σcredits − Σcharges, reserved = Σ open reservations (of those
 * listed, which must be every reservation the owner ever had), available never negative.
 */
export async function assertLedgerConsistent(store: Store, owner: OwnerRef, reservationIds: readonly string[]) {
  const entries = await store.listEntries(owner);
  const credits = sum(entries.filter((entry) => entry.kind === 'credit').map((entry) => entry.amount));
  const charges = sum(entries.filter((entry) => entry.kind === 'charge').map((entry) => entry.amount));
  const reservations = await Promise.all(reservationIds.map((id) => store.getReservation(id)));
  const open = sum(reservations.filter((reservation) => reservation?.status === 'open').map((reservation) => reservation!.amount));
  const balance = await store.getBalance(owner);
  assert.equal(balance.balance, credits - charges, 'balance = Σcredits − Σcharges');
  assert.equal(balance.reserved, open, 'reserved = Σ open reservations');
  assert.equal(balance.available, balance.balance - balance.reserved);
  assert.ok(balance.available >= 0n, 'available is never negative');
  assert.ok(
    entries.every((entry) => entry.amount > 0n),
    'entries are positive',
  );
  return balance;
}

export const MINUTE = 60_000;
