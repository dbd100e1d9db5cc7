/**
 * The SQLite ledger's bookkeeping on its own: a hand-driven clock, wallet rows in a map, the
 * writes recorded instead of run, and the wake-ups called by the test.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { OwnerRef, Reservation } from '../../src/storage/store.ts';
import { IDLE_WALLET_MS, WalletBook, WRITE_OPEN_AFTER_MS, type BookWrites, type WalletRow } from '../../src/storage/sqlite/wallet-book.ts';

const alice: OwnerRef = { kind: 'account', id: 'acct_alice' };
const bob: OwnerRef = { kind: 'organization', id: 'org_bob' };

function harness(rows: Record<string, WalletRow>) {
  let clock = 1_000_000;
  const wallets = new Map(Object.entries(rows));
  const reads: string[] = [];
  let writeRequests = 0;
  const wakes: { delayMs: number; wake: () => void }[] = [];
  const book = new WalletBook({
    holder: { kind: 'instance', id: 'ins_this' },
    now: () => clock,
    readWallet: (owner) => {
      reads.push(owner.id);
      return wallets.get(owner.id);
    },
    requestWrite: () => void (writeRequests += 1),
    wakeAfter: (delayMs, wake) => void wakes.push({ delayMs, wake }),
  });
  /** Runs a write and returns what it asked for, in order. */
  const write = () => {
    const log: unknown[] = [];
    const writes: BookWrites = {
      insertReservation: (reservation, status, closedAt) => void log.push(['insert', reservation.id, status, closedAt]),
      closeReservation: (id, status, closedAt) => void log.push(['close', id, status, closedAt]),
      insertCharge: (reservation, amount, requestId, at) => void log.push(['charge', reservation.id, amount, requestId, at]),
      applyDeltas: (owner, balanceDelta, reservedDelta) => {
        log.push(['wallet', owner.id, balanceDelta, reservedDelta]);
        const row = wallets.get(owner.id)!;
        wallets.set(owner.id, { balance: row.balance + balanceDelta, reserved: row.reserved + reservedDelta });
      },
    };
    book.write(writes);
    return log;
  };
  return {
    book,
    write,
    wallets,
    reads,
    wakes,
    writeRequests: () => writeRequests,
    advance: (ms: number) => void (clock += ms),
    now: () => clock,
    reserve: (owner: OwnerRef, amount: bigint, requestId: string | null = null) => book.reserve({ owner, amount, requestId, expiresAt: clock + 60_000 }),
  };
}

describe('wallet book', () => {
  test("a job's hold is written as open in the next group, whatever its age; one closed first is written once, closed", () => {
    const { book, write, writeRequests } = harness({ acct_alice: { balance: 1_000n, reserved: 0n } });
    const job = book.reserve({ owner: alice, amount: 100n, requestId: 'req_job', expiresAt: 2_000_000, holder: { kind: 'job', id: 'resp_1' } })!;
    const request = book.reserve({ owner: alice, amount: 50n, requestId: 'req_plain', expiresAt: 2_000_000 })!;
    assert.deepEqual(job.holder, { kind: 'job', id: 'resp_1' });
    assert.equal(writeRequests(), 1, 'the job hold asks for a write at once');
    assert.deepEqual(write(), [
      ['insert', job.id, 'open', null],
      ['wallet', 'acct_alice', 0n, 100n],
    ]);
    assert.equal(book.open(request.id)?.written, false, 'a young request hold still waits');

    const closedFirst = book.reserve({ owner: alice, amount: 10n, requestId: null, expiresAt: 2_000_000, holder: { kind: 'job', id: 'resp_2' } })!;
    book.close(book.open(closedFirst.id)!, 'released', 0n, null);
    assert.deepEqual(write(), [
      ['insert', closedFirst.id, 'released', 1_000_000],
      ['wallet', 'acct_alice', 0n, 0n],
    ]);
  });

  test('holds only what the available balance covers, and refuses unknown owners', () => {
    const { book, reserve } = harness({ acct_alice: { balance: 1_000n, reserved: 100n } });
    assert.equal(reserve({ kind: 'account', id: 'acct_missing' }, 0n), null);
    const first = reserve(alice, 600n, 'req_1');
    assert.ok(first);
    assert.deepEqual(
      { ...first, id: 'x' },
      {
        id: 'x',
        owner: alice,
        amount: 600n,
        requestId: 'req_1',
        keyId: null,
        status: 'open',
        holder: { kind: 'instance', id: 'ins_this' },
        createdAt: 1_000_000,
        expiresAt: 1_060_000,
      },
    );
    assert.equal(reserve(alice, 301n), null);
    assert.ok(reserve(alice, 300n));
    assert.deepEqual(book.balance(alice), { balance: 1_000n, reserved: 1_000n, available: 0n });
  });

  test('a reservation closed before it is written is written once, closed, with its charge and one wallet change', () => {
    const h = harness({ acct_alice: { balance: 1_000n, reserved: 0n } });
    const reservation = h.reserve(alice, 300n, 'req_a')!;
    assert.equal(h.writeRequests(), 0, 'a reservation alone asks for no write');
    const entry = h.book.open(reservation.id)!;
    h.advance(5);
    assert.equal(h.book.close(entry, 'settled', 120n, null), 120n);
    assert.equal(h.book.open(reservation.id), undefined);
    assert.equal(h.writeRequests(), 1);
    assert.deepEqual(h.write(), [
      ['insert', reservation.id, 'settled', 1_000_005],
      ['charge', reservation.id, 120n, 'req_a', 1_000_005],
      ['wallet', 'acct_alice', -120n, 0n],
    ]);
    assert.deepEqual(h.write(), [], 'nothing twice');
    assert.deepEqual(h.book.balance(alice), { balance: 880n, reserved: 0n, available: 880n });
  });

  test('a charge above the hold is the hold: never the free balance, never the other holds', () => {
    const h = harness({ acct_alice: { balance: 1_000n, reserved: 0n } });
    const held = h.reserve(alice, 400n)!;
    const overrun = h.reserve(alice, 100n)!;
    assert.equal(h.book.close(h.book.open(overrun.id)!, 'settled', 5_000n, 'req_late'), 100n);
    assert.deepEqual(h.book.balance(alice), { balance: 900n, reserved: 400n, available: 500n });
    assert.equal(h.book.close(h.book.open(held.id)!, 'released', 0n, null), 0n);
    assert.deepEqual(h.write(), [
      ['insert', overrun.id, 'settled', 1_000_000],
      ['charge', overrun.id, 100n, 'req_late', 1_000_000],
      ['insert', held.id, 'released', 1_000_000],
      ['wallet', 'acct_alice', -100n, 0n],
    ]);
  });

  test('a reservation open for WRITE_OPEN_AFTER_MS is written open with its hold on the row, then closed by id', () => {
    const h = harness({ acct_alice: { balance: 1_000n, reserved: 0n } });
    const reservation = h.reserve(alice, 300n)!;
    assert.deepEqual(
      h.wakes.map((wake) => wake.delayMs),
      [WRITE_OPEN_AFTER_MS],
      'one wake-up, when it comes of age',
    );
    h.advance(1);
    h.reserve(alice, 10n);
    assert.equal(h.wakes.length, 1, 'never more than one pending');
    h.advance(WRITE_OPEN_AFTER_MS - 2);
    assert.deepEqual(h.write(), [], 'not of age yet');
    h.advance(1);
    h.wakes[0].wake();
    assert.equal(h.writeRequests(), 1, 'the wake-up asks for a write');
    assert.deepEqual(h.write(), [
      ['insert', reservation.id, 'open', null],
      ['wallet', 'acct_alice', 0n, 300n],
    ]);
    assert.deepEqual(
      h.wakes.map((wake) => wake.delayMs),
      [WRITE_OPEN_AFTER_MS, 1],
      'the next one when the younger comes of age',
    );
    h.book.close(h.book.open(reservation.id)!, 'settled', 50n, null);
    assert.deepEqual(h.write(), [
      ['close', reservation.id, 'settled', h.now()],
      ['charge', reservation.id, 50n, null, h.now()],
      ['wallet', 'acct_alice', -50n, -300n],
    ]);
    assert.deepEqual(h.wallets.get('acct_alice'), { balance: 950n, reserved: 0n });
  });

  test('a lost write unwrites what it wrote open and reads the wallets again', () => {
    const h = harness({ acct_alice: { balance: 1_000n, reserved: 0n } });
    const reservation = h.reserve(alice, 300n)!;
    h.advance(WRITE_OPEN_AFTER_MS);
    const before = structuredClone(h.wallets.get('acct_alice'));
    assert.equal(h.write().length, 2);
    h.wallets.set('acct_alice', before!); // the rollback
    h.book.lost();
    assert.deepEqual(h.book.balance(alice), { balance: 1_000n, reserved: 300n, available: 700n }, 'the hold is unwritten again, still held');
    assert.deepEqual(
      h.write(),
      [
        ['insert', reservation.id, 'open', null],
        ['wallet', 'acct_alice', 0n, 300n],
      ],
      'written open again',
    );
  });

  test('resync takes balances from the rows and drops wallets without holds', () => {
    const h = harness({ acct_alice: { balance: 100n, reserved: 0n }, org_bob: { balance: 50n, reserved: 0n } });
    assert.ok(h.reserve(alice, 100n));
    const bobs = h.reserve(bob, 50n)!;
    h.book.close(h.book.open(bobs.id)!, 'released', 0n, null);
    h.write();
    h.wallets.set('acct_alice', { balance: 600n, reserved: 0n }); // credited by another process
    h.book.resync();
    assert.deepEqual(h.book.balance(alice), { balance: 600n, reserved: 100n, available: 500n }, 'the unwritten hold stays');
    assert.equal(h.book.balance(bob), undefined, 'no holds: dropped, read when next used');
  });

  test('credits and rows released elsewhere move a held wallet; an unheld one is left to its row', () => {
    const h = harness({ acct_alice: { balance: 100n, reserved: 40n } });
    h.book.credited(bob, 5n);
    assert.equal(h.book.balance(bob), undefined);
    assert.ok(h.reserve(alice, 10n));
    h.book.credited(alice, 25n);
    h.book.rowsReleased(alice, 40n);
    assert.deepEqual(h.book.balance(alice), { balance: 125n, reserved: 10n, available: 115n });
  });

  test('releaseExpired closes the held reservations whose expiry has passed', () => {
    const h = harness({ acct_alice: { balance: 100n, reserved: 0n } });
    const early = h.book.reserve({ owner: alice, amount: 10n, requestId: null, expiresAt: 500 })!;
    const boundary = h.book.reserve({ owner: alice, amount: 20n, requestId: null, expiresAt: 1_000 })!;
    assert.equal(h.book.releaseExpired(1_000), 1);
    assert.equal(h.book.open(early.id), undefined);
    assert.ok(h.book.open(boundary.id));
    assert.deepEqual(h.book.balance(alice), { balance: 100n, reserved: 20n, available: 80n });
  });

  test('a refused owner is not kept; an idle wallet is dropped after IDLE_WALLET_MS', () => {
    const h = harness({ acct_alice: { balance: 10n, reserved: 0n }, org_bob: { balance: 0n, reserved: 0n } });
    assert.equal(h.reserve(bob, 1n), null);
    assert.equal(h.book.balance(bob), undefined);
    const reservation = h.reserve(alice, 10n)!;
    h.book.close(h.book.open(reservation.id)!, 'settled', 10n, null);
    h.write();
    assert.equal(h.reserve(alice, 1n), null);
    assert.equal(h.book.balance(alice), undefined, 'refused with no hold open: dropped');
    const again = h.reserve(alice, 0n)!;
    h.book.close(h.book.open(again.id)!, 'released', 0n, null);
    h.write();
    assert.ok(h.book.balance(alice), 'kept between requests');
    const readsBefore = h.reads.length;
    h.advance(IDLE_WALLET_MS);
    h.write();
    assert.equal(h.book.balance(alice), undefined, 'dropped once idle');
    assert.equal(h.reads.length, readsBefore, 'dropping reads nothing');
  });

  test('adopt takes over a reservation written open by an earlier run: its hold is already on the row', () => {
    const h = harness({ acct_alice: { balance: 500n, reserved: 200n } });
    const earlier: Reservation = {
      id: 'res_earlier',
      owner: alice,
      amount: 200n,
      requestId: 'req_e',
      keyId: null,
      status: 'open',
      holder: null,
      createdAt: 1,
      expiresAt: 2_000_000,
    };
    const entry = h.book.adopt(earlier);
    assert.deepEqual(h.book.balance(alice), { balance: 500n, reserved: 200n, available: 300n });
    h.book.close(entry, 'settled', 150n, null);
    assert.deepEqual(h.write(), [
      ['close', 'res_earlier', 'settled', h.now()],
      ['charge', 'res_earlier', 150n, 'req_e', h.now()],
      ['wallet', 'acct_alice', -150n, -200n],
    ]);
    assert.deepEqual(h.wallets.get('acct_alice'), { balance: 350n, reserved: 0n });
  });
});
