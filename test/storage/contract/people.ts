import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GENESIS_HASH, recomputedAuditHash } from '../../../src/storage/people-rows.ts';
import type { AuditEntry } from '../../../src/storage/people.ts';
import { newAccount, type ContractContext } from './context.ts';

const HOUR = 3_600_000;

export function peopleContract({ store, peer, fresh }: ContractContext): void {
  describe('people', () => {
    test('users: one per email in any case, paged in creation order, filtered by owner; patches and removal', async () => {
      const owner = await newAccount(store(), 'people');
      const email = `Ada.${Date.now()}@Example.com`;
      const ada = await store().createUser({ email, displayName: 'Ada', role: { kind: 'member', owner } });
      assert.ok(ada);
      assert.equal(ada.email, email.toLowerCase());
      assert.equal(ada.passwordHash, null);
      assert.equal(ada.status, 'active');
      assert.equal(await peer().createUser({ email: email.toUpperCase(), role: { kind: 'operator' } }), null, 'the email is taken');
      assert.deepEqual(await peer().getUserByEmail(` ${email.toUpperCase()} `), ada);
      const others = [];
      for (let index = 0; index < 3; index += 1) {
        others.push(await store().createUser({ email: `member${index}.${Date.now()}@example.com`, role: { kind: 'member', owner } }));
      }
      const first = await peer().listUsers({ owner }, { limit: 3 });
      assert.deepEqual(
        first.items.map((user) => user.id),
        [ada.id, others[0]!.id, others[1]!.id],
      );
      assert.ok(first.next);
      const second = await peer().listUsers({ owner }, { after: first.next, limit: 3 });
      assert.deepEqual(
        second.items.map((user) => user.id),
        [others[2]!.id],
      );
      assert.equal(second.next, null);

      const changed = await peer().updateUser(ada.id, { passwordHash: 'scrypt$x', lastSignInAt: 1234 });
      assert.equal(changed?.passwordHash, 'scrypt$x');
      assert.equal(changed?.displayName, 'Ada', 'fields not in the patch stay');
      assert.equal(changed?.lastSignInAt, 1234);
      assert.equal((await store().updateUser(ada.id, { displayName: null, status: 'disabled' }))?.displayName, null);
      assert.equal(await store().updateUser('user_missing', { status: 'active' }), null);
      assert.equal((await store().deleteUser(ada.id))?.id, ada.id);
      assert.equal(await peer().getUser(ada.id), null);
      assert.equal(await store().deleteUser(ada.id), null);
    });

    test('operators are counted while active', async () => {
      const open = fresh();
      const a = await open();
      try {
        assert.equal(await a.countOperators(), 0);
        const operator = await a.createUser({ email: 'op@example.com', role: { kind: 'operator' } });
        await a.createUser({ email: 'member@example.com', role: { kind: 'member', owner: await newAccount(a) } });
        assert.equal(await a.countOperators(), 1);
        await a.updateUser(operator!.id, { status: 'disabled' });
        assert.equal(await a.countOperators(), 0);
      } finally {
        await a.close();
      }
    });

    test('sessions: any instance reads them; activity moves forward only; sign-out everywhere ends every one of a user', async () => {
      const user = (await store().createUser({ email: `sessions.${Date.now()}@example.com`, role: { kind: 'operator' } }))!;
      const base = { userId: user.id, csrfToken: 'csrf', createdAt: 1_000, lastSeenAt: 1_000, expiresAt: 1_000 + HOUR };
      await store().createSession({ ...base, idHash: `${user.id}-a` });
      await store().createSession({ ...base, idHash: `${user.id}-b` });
      assert.deepEqual(await peer().getSession(`${user.id}-a`), { ...base, idHash: `${user.id}-a` });
      await peer().touchSession(`${user.id}-a`, 5_000);
      await store().touchSession(`${user.id}-a`, 2_000);
      assert.equal((await store().getSession(`${user.id}-a`))?.lastSeenAt, 5_000);
      await store().deleteSession(`${user.id}-b`);
      assert.equal(await peer().getSession(`${user.id}-b`), null);
      await store().createSession({ ...base, idHash: `${user.id}-c` });
      assert.equal(await peer().deleteUserSessions(user.id), 2);
      assert.equal(await store().getSession(`${user.id}-a`), null);
      await store().createSession({ ...base, idHash: `${user.id}-d`, expiresAt: 10 });
      assert.ok((await peer().deleteExpiredSessions(11)) >= 1);
      assert.equal(await store().getSession(`${user.id}-d`), null);
    });

    test('tokens: used once even when two instances race, never after expiry, only for their purpose; invitations listed until used', async () => {
      const owner = await newAccount(store(), 'invited');
      const now = Date.now();
      const invitation = await store().createUserToken(
        {
          hash: `h-${now}-1`,
          purpose: 'invitation',
          userId: null,
          email: 'New@Example.com',
          role: { kind: 'member', owner },
          createdBy: 'op',
          expiresAt: now + HOUR,
        },
        now,
      );
      assert.equal(invitation.email, 'new@example.com');
      assert.deepEqual(invitation.role, { kind: 'member', owner });
      assert.deepEqual(await peer().getUserToken(invitation.hash), invitation);
      const listed = await peer().listInvitations(now, { limit: 500 });
      assert.ok(listed.items.some((token) => token.id === invitation.id));
      assert.equal(await store().consumeUserToken(invitation.hash, ['password_reset'], now), null, 'another purpose');
      const race = await Promise.all([
        store().consumeUserToken(invitation.hash, ['invitation'], now),
        peer().consumeUserToken(invitation.hash, ['invitation'], now),
      ]);
      assert.equal(race.filter((token) => token !== null).length, 1, 'exactly one consumer wins');
      assert.ok(
        (await peer().listInvitations(now, { limit: 500 })).items.every((token) => token.id !== invitation.id),
        'a used invitation is not listed',
      );

      const user = (await store().createUser({ email: `reset.${now}@example.com`, role: { kind: 'operator' } }))!;
      const reset = await store().createUserToken(
        { hash: `h-${now}-2`, purpose: 'password_reset', userId: user.id, email: user.email, role: null, createdBy: 'op', expiresAt: now + HOUR },
        now,
      );
      assert.equal(await store().consumeUserToken(reset.hash, ['sign_in', 'password_reset'], now + HOUR), null, 'expired');
      const revoked = await peer().revokeUserToken(reset.id, now);
      assert.equal(revoked?.id, reset.id);
      assert.equal(await store().consumeUserToken(reset.hash, ['password_reset'], now), null, 'revoked');
      assert.equal(await store().revokeUserToken(reset.id, now), null, 'revoked once');
    });
  });

  describe('dashboard lists', () => {
    test('organizations and accounts in creation order, by keyset pages, of one organization or all', async () => {
      const open = fresh();
      const a = await open();
      try {
        const org = await a.createOrganization({ name: 'org' });
        const inOrg = [await a.createAccount({ name: 'a1', organizationId: org.id }), await a.createAccount({ name: 'a2', organizationId: org.id })];
        const alone = await a.createAccount({ name: 'alone' });
        const first = await a.pageAccounts({ organizationId: org.id }, { limit: 1 });
        assert.deepEqual(
          first.items.map((account) => account.id),
          [inOrg[0]!.id],
        );
        const second = await a.pageAccounts({ organizationId: org.id }, { after: first.next, limit: 1 });
        assert.deepEqual(
          second.items.map((account) => account.id),
          [inOrg[1]!.id],
        );
        assert.equal(second.next, null);
        assert.deepEqual(
          (await a.pageAccounts({}, { limit: 10 })).items.map((account) => account.id),
          [...inOrg.map((account) => account.id), alone.id],
        );
        assert.deepEqual((await a.pageOrganizations({ limit: 10 })).items, [org]);
      } finally {
        await a.close();
      }
    });

    test('keys newest first with their last charge; the credit history with a running balance that ends at the balance', async () => {
      const owner = await newAccount(store(), 'lists');
      const older = await store().createKey({ owner, hash: `hash-older-${Date.now()}`, displayPrefix: 'gateway_o' });
      const newer = await store().createKey({ owner, hash: `hash-newer-${Date.now()}`, displayPrefix: 'gateway_n' });
      await store().addCredit(owner, 1_000n, 'first');
      const hold = (await store().reserve({ owner, amount: 300n, requestId: null, keyId: older.id, expiresAt: Date.now() + HOUR }))!;
      await store().settle(hold.id, 120n);
      await store().addCredit(owner, 50n, 'second');
      const keys = await peer().pageKeys(owner, { limit: 1 });
      assert.deepEqual(
        keys.items.map((line) => [line.key.id, line.lastUsedAt]),
        [[newer.id, null]],
      );
      const rest = await peer().pageKeys(owner, { after: keys.next, limit: 1 });
      assert.equal(rest.items[0]!.key.id, older.id);
      assert.ok(rest.items[0]!.lastUsedAt !== null, 'charged once');

      const all = await store().pageLedger(owner, { limit: 10 });
      assert.deepEqual(
        all.items.map((line) => [line.entry.kind, line.entry.amount, line.balanceAfter]),
        [
          ['credit', 50n, 930n],
          ['charge', 120n, 880n],
          ['credit', 1_000n, 1_000n],
        ],
      );
      assert.equal(all.items[0]!.balanceAfter, (await store().getBalance(owner)).balance);
      const top = await peer().pageLedger(owner, { limit: 2 });
      const deeper = await peer().pageLedger(owner, { after: top.next, limit: 2 });
      assert.deepEqual(
        deeper.items.map((line) => line.balanceAfter),
        [1_000n],
        'a deeper page continues the running balance',
      );
      assert.equal(deeper.next, null);
      const fromBareId = await store().pageLedger(owner, { after: top.next!.split('~')[0], limit: 2 });
      assert.deepEqual(fromBareId, deeper, 'a cursor without the carried balance sums the newer entries to the same figures');
    });
  });

  describe('audit log', () => {
    const entry = (action: string, overrides: Partial<AuditEntry> = {}): AuditEntry => ({
      actor: { kind: 'user', id: 'user_1', label: 'ada@example.com' },
      action,
      target: { kind: 'account', id: 'acct_1' },
      changes: { name: { before: 'a', after: 'b' }, rate: { after: '1.5' } },
      source: '127.0.0.1',
      ...overrides,
    });

    test('appends from two instances at once form one chain with no gap, each row hashing its predecessor', async () => {
      const open = fresh();
      const a = await open();
      const b = await open();
      try {
        await Promise.all(Array.from({ length: 12 }, (_, index) => (index % 2 ? a : b).appendAudit(entry(`account.update`), 1_000 + index)));
        const chain = await a.auditChain(0, 100);
        assert.deepEqual(
          chain.map((row) => row.seq),
          Array.from({ length: 12 }, (_, index) => index + 1),
        );
        assert.equal(chain[0]!.prevHash, GENESIS_HASH);
        chain.forEach((row, index) => {
          assert.equal(row.hash, recomputedAuditHash(row));
          if (index > 0) assert.equal(row.prevHash, chain[index - 1]!.hash);
        });
        assert.deepEqual(chain[0]!.changes, { name: { before: 'a', after: 'b' }, rate: { after: '1.5' } });
        assert.deepEqual(
          (await b.auditChain(10, 100)).map((row) => row.seq),
          [11, 12],
        );
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('lists newest first with filters and keyset pages; counts by source and target', async () => {
      const open = fresh();
      const a = await open();
      try {
        await a.appendAudit(entry('account.create'), 100);
        await a.appendAudit(entry('key.create', { target: { kind: 'key', id: 'key_1' } }), 200);
        await a.appendAudit(entry('key.revoke', { target: { kind: 'key', id: 'key_1' }, actor: { kind: 'cli', id: null, label: 'cli' } }), 300);
        await a.appendAudit(entry('user.sign_in_failed', { target: { kind: 'email', id: 'x@example.com' }, source: '10.0.0.1', changes: null }), 400);
        await a.appendAudit(entry('user.sign_in_failed', { target: { kind: 'email', id: 'y@example.com' }, source: '10.0.0.1', changes: null }), 500);
        const actions = async (filter: Parameters<typeof a.listAudit>[0]) => (await a.listAudit(filter, { limit: 10 })).items.map((row) => row.action);
        assert.deepEqual(await actions({}), ['user.sign_in_failed', 'user.sign_in_failed', 'key.revoke', 'key.create', 'account.create']);
        assert.deepEqual(await actions({ action: 'key.' }), ['key.revoke', 'key.create']);
        assert.deepEqual(await actions({ targetId: 'key_1', actor: 'cli' }), ['key.revoke']);
        assert.deepEqual(await actions({ since: 200, until: 400 }), ['key.revoke', 'key.create']);
        const page = await a.listAudit({}, { limit: 2 });
        assert.deepEqual(
          (await a.listAudit({}, { after: page.next, limit: 2 })).items.map((row) => row.seq),
          [3, 2],
        );
        assert.equal(await a.countAudit({ action: 'user.sign_in_failed', source: '10.0.0.1', since: 450 }), 1);
        assert.equal(await a.countAudit({ action: 'user.sign_in_failed', source: '10.0.0.1', since: 0 }), 2);
        assert.equal(await a.countAudit({ action: 'user.sign_in_failed', targetId: 'x@example.com', since: 0 }), 1);
      } finally {
        await a.close();
      }
    });
  });
}
