import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Reservation, SettleOutcome } from '../../../src/storage/store.ts';
import { assertLedgerConsistent, MINUTE, newAccount, sum, type ContractContext } from './context.ts';

export function ledgerConcurrencyContract({ store, peer }: ContractContext): void {
  describe('ledger under concurrency', () => {
    test('200 concurrent reservations on two instances take exactly what the balance affords', async () => {
      const owner = await newAccount(store());
      const amount = 7_000_000n;
      const balance = 37n * amount + 3_333_333n;
      await store().addCredit(owner, balance);
      const expiresAt = Date.now() + MINUTE;

      const observed: bigint[] = [];
      const attempts = Array.from({ length: 200 }, async (_, index) => {
        const instance = index % 2 === 0 ? store() : peer();
        const reservation = await instance.reserve({ owner, amount, requestId: `req_${index}`, expiresAt });
        if (index % 10 === 0) observed.push((await instance.getBalance(owner)).available);
        return reservation;
      });
      const results = await Promise.all(attempts);
      const reserved = results.filter((reservation): reservation is Reservation => reservation !== null);
      assert.equal(reserved.length, Number(balance / amount));
      assert.ok(
        observed.every((available) => available >= 0n),
        'available never went below zero',
      );
      assert.deepEqual(await store().getBalance(owner), {
        balance,
        reserved: 37n * amount,
        available: 3_333_333n,
      });

      // Settle a third (some above their reservation), release a third, leave the rest open — all at once,
      // each closing call racing a duplicate of itself on the other instance.
      const closings = reserved.flatMap((reservation, index): Promise<SettleOutcome | boolean | null>[] => {
        switch (index % 3) {
          case 0: {
            const cost = index % 2 === 0 ? amount / 3n : amount + 1_000_000n;
            return [store().settle(reservation.id, cost), peer().settle(reservation.id, cost)];
          }
          case 1:
            return [store().release(reservation.id), peer().release(reservation.id)];
          default:
            return [];
        }
      });
      const outcomes = await Promise.all(closings);
      const settles = outcomes.filter((outcome) => typeof outcome === 'object');
      assert.equal(settles.filter((outcome) => outcome !== null).length, reserved.filter((_, i) => i % 3 === 0).length);
      const releases = outcomes.filter((outcome) => typeof outcome === 'boolean');
      assert.equal(releases.filter(Boolean).length, reserved.filter((_, i) => i % 3 === 1).length);

      const entries = await store().listEntries(owner);
      const charged = entries.filter((entry) => entry.kind === 'charge');
      assert.equal(new Set(charged.map((entry) => entry.reservationId)).size, charged.length, 'one charge per reservation');
      const stillOpen = reserved.filter((_, i) => i % 3 === 2);
      const final = await assertLedgerConsistent(
        store(),
        owner,
        reserved.map((reservation) => reservation.id),
      );
      assert.equal(final.reserved, sum(stillOpen.map((reservation) => reservation.amount)));
      assert.equal(final.balance, balance - sum(charged.map((entry) => entry.amount)));
    });

    test('concurrent overrunning settles charge each its reservation, no more', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 1_000n);
      const expiresAt = Date.now() + MINUTE;
      const reservations: Reservation[] = [];
      for (let i = 0; i < 10; i++) {
        reservations.push((await store().reserve({ owner, amount: 50n, requestId: null, expiresAt }))!);
      }
      const outcomes = await Promise.all(reservations.map((reservation, index) => (index % 2 === 0 ? store() : peer()).settle(reservation.id, 300n)));
      const charged = sum(outcomes.map((outcome) => outcome!.charged));
      const shortfall = sum(outcomes.map((outcome) => outcome!.shortfall));
      assert.equal(charged, 500n, 'each reservation was charged, and no more');
      assert.equal(charged + shortfall, 3_000n);
      const final = await assertLedgerConsistent(
        store(),
        owner,
        reservations.map((reservation) => reservation.id),
      );
      assert.deepEqual(final, { balance: 500n, reserved: 0n, available: 500n });
    });

    test('a mixed load of reserve, settle, release and credit on two instances keeps the identities', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 20_000n);
      const expiresAt = Date.now() + MINUTE;
      const reservationIds: string[] = [];
      const requests = Array.from({ length: 400 }, async (_, index) => {
        const [here, there] = index % 2 === 0 ? [store(), peer()] : [peer(), store()];
        if (index % 25 === 0) await there.addCredit(owner, 1_000n);
        const reservation = await here.reserve({ owner, amount: BigInt(50 + (index % 7) * 13), requestId: null, expiresAt });
        if (!reservation) return;
        reservationIds.push(reservation.id);
        switch (index % 4) {
          case 0:
            // Often above the reservation, which caps the charge.
            await there.settle(reservation.id, BigInt((index * 37) % 900));
            break;
          case 1:
            await Promise.all([here.settle(reservation.id, 10n), there.release(reservation.id)]);
            break;
          case 2:
            await here.release(reservation.id);
            break;
          default:
            break;
        }
      });
      await Promise.all(requests);
      await assertLedgerConsistent(store(), owner, reservationIds);
    });

    test('holds asked for at once are each decided in turn, as if each came alone', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 1_000n);
      const expiresAt = Date.now() + MINUTE;
      const amounts = [600n, 600n, 300n, 100n, 1n];
      const holds = await Promise.all(amounts.map((amount) => store().reserve({ owner, amount, requestId: null, expiresAt })));
      assert.deepEqual(
        holds.map((hold) => hold?.amount ?? null),
        [600n, null, 300n, 100n, null],
        'a hold too large for what is left is refused, and the smaller ones after it still fit',
      );
      // Seen from the other instance the moment they are granted, and closable there.
      const [large, , middle, small] = holds as Reservation[];
      assert.equal((await peer().getReservation(large.id))?.status, 'open');
      const [settled, released, doubleSettled] = await Promise.all([
        store().settle(large.id, 600n),
        store().release(large.id),
        peer().settle(middle.id, 0n),
        store().settle(small.id, 100n),
        store().settle(small.id, 100n),
      ]).then(([first, second, third, fourth, fifth]) => [first, second, [third, fourth, fifth]] as const);
      assert.deepEqual(settled, { charged: 600n, released: 0n, shortfall: 0n });
      assert.equal(released, false, 'the release racing the settlement finds it closed');
      assert.deepEqual(doubleSettled[0], { charged: 0n, released: 300n, shortfall: 0n });
      assert.equal(doubleSettled.filter((outcome) => outcome !== null).length, 2, 'a duplicate settlement charges nothing');
      const final = await assertLedgerConsistent(
        store(),
        owner,
        holds.flatMap((hold) => (hold ? [hold.id] : [])),
      );
      assert.deepEqual(final, { balance: 300n, reserved: 0n, available: 300n });
      const charges = (await store().listEntries(owner)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(
        charges.map((entry) => [entry.reservationId, entry.amount]).sort(),
        [
          [large.id, 600n],
          [small.id, 100n],
        ].sort(),
      );
    });

    test('concurrent credits and reservations keep the identities', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 100n);
      const expiresAt = Date.now() + MINUTE;
      const operations = Array.from({ length: 60 }, (_, index) => {
        const instance = index % 2 === 0 ? store() : peer();
        return index % 3 === 0 ? instance.addCredit(owner, 40n).then(() => null) : instance.reserve({ owner, amount: 30n, requestId: null, expiresAt });
      });
      const reservations = (await Promise.all(operations)).filter((reservation) => reservation !== null);
      const final = await assertLedgerConsistent(
        store(),
        owner,
        reservations.map((reservation) => reservation.id),
      );
      assert.equal(final.balance, 100n + 20n * 40n);
      assert.equal(final.reserved, BigInt(reservations.length) * 30n);
    });
  });
}
