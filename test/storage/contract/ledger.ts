import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../../src/core/errors.ts';
import { usdToPicos } from '../../../src/core/money.ts';
import { assertLedgerConsistent, MINUTE, newAccount, type ContractContext } from './context.ts';

const INT64_MAX = 2n ** 63n - 1n;

export function ledgerContract({ store, peer }: ContractContext): void {
  describe('ledger', () => {
    test('a new owner has a zero balance; credits add up as entries', async () => {
      const owner = await newAccount(store());
      assert.deepEqual(await store().getBalance(owner), { balance: 0n, reserved: 0n, available: 0n });
      const entry = await store().addCredit(owner, usdToPicos('12.5'), 'welcome credit');
      assert.match(entry.id, /^led_[0-9a-z]{27}$/);
      assert.deepEqual(
        { ...entry, createdAt: 0 },
        {
          id: entry.id,
          owner,
          kind: 'credit',
          amount: 12_500_000_000_000n,
          reservationId: null,
          requestId: null,
          keyId: null,
          note: 'welcome credit',
          createdAt: 0,
        },
      );
      await peer().addCredit(owner, 1n);
      assert.deepEqual(await store().getBalance(owner), {
        balance: 12_500_000_000_001n,
        reserved: 0n,
        available: 12_500_000_000_001n,
      });
      assert.deepEqual(
        (await store().listEntries(owner)).map((e) => [e.kind, e.amount, e.note]),
        [
          ['credit', 12_500_000_000_000n, 'welcome credit'],
          ['credit', 1n, null],
        ],
      );
      await assertLedgerConsistent(store(), owner, []);
    });

    test('organizations hold credit too', async () => {
      const organization = await store().createOrganization({ name: 'Payer' });
      const owner = { kind: 'organization', id: organization.id } as const;
      await store().addCredit(owner, 500n);
      const reservation = await store().reserve({ owner, amount: 200n, requestId: null, expiresAt: Date.now() + MINUTE });
      assert.equal(reservation?.owner.kind, 'organization');
      assert.deepEqual(await store().getBalance(owner), { balance: 500n, reserved: 200n, available: 300n });
    });

    test('credits must be positive, fit in 64 bits and go to an existing owner', async () => {
      const owner = await newAccount(store());
      await assert.rejects(store().addCredit(owner, 0n), RangeError);
      await assert.rejects(store().addCredit(owner, -5n), RangeError);
      await assert.rejects(store().addCredit(owner, INT64_MAX + 1n), RangeError);
      await assert.rejects(
        store().addCredit({ kind: 'account', id: 'acct_missing' }, 1n),
        (error: unknown) => error instanceof GatewayError && error.status === 404,
      );
      await store().addCredit(owner, INT64_MAX - 10n);
      await assert.rejects(store().addCredit(owner, 11n), RangeError, 'a credit that would overflow the balance');
      await store().addCredit(owner, 10n);
      assert.equal((await store().getBalance(owner)).balance, INT64_MAX);
      await assertLedgerConsistent(store(), owner, []);
    });

    test('reserve holds money only when available covers it', async () => {
      const owner = await newAccount(store());
      const zero = await store().reserve({ owner, amount: 0n, requestId: null, expiresAt: Date.now() + MINUTE });
      assert.equal(zero?.status, 'open', 'a free request reserves nothing, even with no credit');
      assert.equal(await store().reserve({ owner, amount: 1n, requestId: null, expiresAt: Date.now() + MINUTE }), null);
      await store().addCredit(owner, 1_000n);
      const expiresAt = Date.now() + MINUTE;
      const first = await store().reserve({ owner, amount: 600n, requestId: 'req_1', expiresAt });
      assert.ok(first);
      assert.match(first.id, /^res_[0-9a-z]{27}$/);
      assert.deepEqual(
        { ...first, createdAt: 0 },
        {
          id: first.id,
          owner,
          amount: 600n,
          requestId: 'req_1',
          keyId: null,
          status: 'open',
          holder: { kind: 'instance', id: store().instanceId },
          createdAt: 0,
          expiresAt,
        },
      );
      assert.deepEqual(await peer().getReservation(first.id), first);
      assert.equal(await store().reserve({ owner, amount: 401n, requestId: null, expiresAt }), null);
      const second = await peer().reserve({ owner, amount: 400n, requestId: null, expiresAt });
      assert.ok(second);
      assert.deepEqual(second.holder, { kind: 'instance', id: peer().instanceId }, 'held by the instance that made it');
      assert.deepEqual((await store().getReservation(second.id))?.holder, second.holder);
      assert.deepEqual(await store().getBalance(owner), { balance: 1_000n, reserved: 1_000n, available: 0n });
      assert.equal(await store().reserve({ owner, amount: 1n, requestId: null, expiresAt }), null);
      await assert.rejects(store().reserve({ owner, amount: -1n, requestId: null, expiresAt }), RangeError);
      assert.equal(await store().reserve({ owner: { kind: 'account', id: 'acct_missing' }, amount: 0n, requestId: null, expiresAt }), null);
      assert.equal(await store().getReservation('res_missing'), null);
      await assertLedgerConsistent(store(), owner, [zero!.id, first.id, second.id]);
    });

    test('settle charges the cost once and releases the rest', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 1_000n);
      const reservation = (await store().reserve({ owner, amount: 300n, requestId: 'req_a', expiresAt: Date.now() + MINUTE }))!;
      assert.deepEqual(await store().settle(reservation.id, 120n), { charged: 120n, released: 180n, shortfall: 0n });
      assert.equal(await store().settle(reservation.id, 120n), null, 'a second settle finds nothing open');
      assert.equal(await peer().settle(reservation.id, 50n), null);
      assert.equal(await store().release(reservation.id), false);
      assert.equal((await store().getReservation(reservation.id))?.status, 'settled');
      assert.deepEqual(await store().getBalance(owner), { balance: 880n, reserved: 0n, available: 880n });
      const charges = (await store().listEntries(owner)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(
        charges.map((entry) => [entry.amount, entry.reservationId, entry.requestId]),
        [[120n, reservation.id, 'req_a']],
      );
      await assertLedgerConsistent(store(), owner, [reservation.id]);
    });

    test('settle records the given request id and charges nothing for a zero cost', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 100n);
      const free = (await store().reserve({ owner, amount: 50n, requestId: null, expiresAt: Date.now() + MINUTE }))!;
      assert.deepEqual(await store().settle(free.id, 0n), { charged: 0n, released: 50n, shortfall: 0n });
      const paid = (await store().reserve({ owner, amount: 50n, requestId: null, expiresAt: Date.now() + MINUTE }))!;
      assert.deepEqual(await store().settle(paid.id, 50n, 'req_late'), { charged: 50n, released: 0n, shortfall: 0n });
      const charges = (await store().listEntries(owner)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(
        charges.map((entry) => [entry.amount, entry.requestId]),
        [[50n, 'req_late']],
      );
      await assert.rejects(store().settle(paid.id, -1n), RangeError);
      await assertLedgerConsistent(store(), owner, [free.id, paid.id]);
    });

    test('a cost above the reservation is charged the reservation, never more, and the rest is the shortfall', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 1_000n);
      const held = (await store().reserve({ owner, amount: 400n, requestId: null, expiresAt: Date.now() + MINUTE }))!;
      const overrun = (await store().reserve({ owner, amount: 100n, requestId: null, expiresAt: Date.now() + MINUTE }))!;
      // The free balance (500) could cover the overrun: the reservation is the cap all the same.
      assert.deepEqual(await store().settle(overrun.id, 250n), { charged: 100n, released: 0n, shortfall: 150n });
      assert.deepEqual(await store().getBalance(owner), { balance: 900n, reserved: 400n, available: 500n });
      assert.deepEqual(await peer().settle(held.id, 5_000n), { charged: 400n, released: 0n, shortfall: 4_600n });
      assert.deepEqual(await store().getBalance(owner), { balance: 500n, reserved: 0n, available: 500n });
      const charges = (await store().listEntries(owner)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(charges.map((entry) => entry.amount).sort(), [100n, 400n]);
      await assertLedgerConsistent(store(), owner, [held.id, overrun.id]);
    });

    test('release returns the hold once', async () => {
      const owner = await newAccount(store());
      await store().addCredit(owner, 100n);
      const reservation = (await store().reserve({ owner, amount: 70n, requestId: null, expiresAt: Date.now() + MINUTE }))!;
      assert.equal(await store().release(reservation.id), true);
      assert.equal(await peer().release(reservation.id), false);
      assert.equal(await store().settle(reservation.id, 10n), null, 'a released reservation cannot be charged');
      assert.equal(await store().release('res_missing'), false);
      assert.equal((await store().getReservation(reservation.id))?.status, 'released');
      // Closed by another instance: the instance that opened it can neither charge nor release it.
      const elsewhere = (await store().reserve({ owner, amount: 20n, requestId: null, expiresAt: Date.now() + MINUTE }))!;
      assert.equal(await peer().release(elsewhere.id), true);
      assert.equal(await store().settle(elsewhere.id, 5n), null);
      assert.equal(await store().release(elsewhere.id), false);
      assert.deepEqual(await store().getBalance(owner), { balance: 100n, reserved: 0n, available: 100n });
      await assertLedgerConsistent(store(), owner, [reservation.id, elsewhere.id]);
    });

    test('releaseExpired releases open reservations whose expiry is before now', async () => {
      // A clock far in the past, so that reservations of other tests (expiring in real time) stay open.
      const now = 1_000_000;
      const owner = await newAccount(store());
      await store().addCredit(owner, 1_000n);
      const expiredA = (await store().reserve({ owner, amount: 100n, requestId: null, expiresAt: now - 1 }))!;
      const expiredB = (await store().reserve({ owner, amount: 200n, requestId: null, expiresAt: now - 500 }))!;
      const boundary = (await store().reserve({ owner, amount: 10n, requestId: null, expiresAt: now }))!;
      const live = (await store().reserve({ owner, amount: 300n, requestId: null, expiresAt: now + 1 }))!;
      const settled = (await store().reserve({ owner, amount: 50n, requestId: null, expiresAt: now - 1 }))!;
      await store().settle(settled.id, 50n);
      const other = await newAccount(store());
      await store().addCredit(other, 100n);
      const otherExpired = (await store().reserve({ owner: other, amount: 40n, requestId: null, expiresAt: now - 1 }))!;

      assert.equal(await store().releaseExpired(now), 3);
      assert.equal(await peer().releaseExpired(now), 0);
      for (const id of [expiredA.id, expiredB.id, otherExpired.id]) {
        assert.equal((await store().getReservation(id))?.status, 'released');
      }
      assert.equal((await store().getReservation(boundary.id))?.status, 'open');
      assert.equal((await store().getReservation(live.id))?.status, 'open');
      assert.equal((await store().getReservation(settled.id))?.status, 'settled');
      assert.deepEqual(await store().getBalance(owner), { balance: 950n, reserved: 310n, available: 640n });
      assert.deepEqual(await store().getBalance(other), { balance: 100n, reserved: 0n, available: 100n });
      assert.equal(await store().settle(expiredA.id, 10n), null, 'an expired reservation cannot be charged');
      await assertLedgerConsistent(store(), owner, [expiredA.id, expiredB.id, boundary.id, live.id, settled.id]);
      await assertLedgerConsistent(store(), other, [otherExpired.id]);
    });
  });
}
