import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { GatewayError } from '../../../src/core/errors.ts';
import type { ContractContext } from './context.ts';

const randomHash = () => randomBytes(32).toString('hex');

export function directoryContract({ store, peer }: ContractContext): void {
  describe('directory', () => {
    test('organizations: consent defaults off, rate null, create/get/list/update', async () => {
      const created = await store().createOrganization({ name: 'Acme' });
      assert.match(created.id, /^org_[0-9a-z]{27}$/);
      assert.deepEqual(created.consent, { communitySupply: false, trainingUse: false });
      assert.equal(created.rate, null);
      assert.equal(typeof created.createdAt, 'number');
      assert.deepEqual(await peer().getOrganization(created.id), created);
      assert.equal(await store().getOrganization('org_missing'), null);

      const second = await store().createOrganization({
        name: 'Beta',
        consent: { trainingUse: true },
        rate: { numerator: 115n, denominator: 100n },
      });
      assert.deepEqual(second.consent, { communitySupply: false, trainingUse: true });
      const listed = (await store().listOrganizations()).map((organization) => organization.id);
      assert.ok(listed.indexOf(created.id) >= 0 && listed.indexOf(created.id) < listed.indexOf(second.id), 'creation order');

      const renamed = await store().updateOrganization(created.id, { name: 'Acme 2', communitySupply: true });
      assert.deepEqual(renamed, { ...created, name: 'Acme 2', consent: { communitySupply: true, trainingUse: false } });
      const rated = await store().updateOrganization(created.id, { rate: { numerator: 3n, denominator: 2n } });
      assert.deepEqual(rated?.rate, { numerator: 3n, denominator: 2n });
      assert.equal(rated?.name, 'Acme 2', 'fields left out of a patch keep their value');
      const reset = await store().updateOrganization(created.id, { rate: null, trainingUse: true });
      assert.equal(reset?.rate, null);
      assert.deepEqual(reset?.consent, { communitySupply: true, trainingUse: true });
      assert.equal(await store().updateOrganization('org_missing', { name: 'x' }), null);
    });

    test('rates round-trip exactly, beyond 2^53', async () => {
      const rate = { numerator: 2n ** 62n + 1n, denominator: 10n ** 18n + 7n };
      const organization = await store().createOrganization({ name: 'Exact', rate });
      assert.deepEqual((await store().getOrganization(organization.id))?.rate, rate);
      await assert.rejects(store().createOrganization({ name: 'Bad', rate: { numerator: 1n, denominator: 0n } }), RangeError);
    });

    test('accounts: create with or without organization, get/list/update', async () => {
      const organization = await store().createOrganization({ name: 'Parent' });
      const member = await store().createAccount({ name: 'Member', organizationId: organization.id });
      assert.match(member.id, /^acct_[0-9a-z]{27}$/);
      assert.equal(member.organizationId, organization.id);
      assert.deepEqual(member.consent, { communitySupply: false, trainingUse: false });
      assert.equal(member.rate, null);

      const solo = await store().createAccount({
        name: 'Solo',
        consent: { communitySupply: true, trainingUse: false },
        rate: { numerator: 1_150_000n, denominator: 1_000_000n },
      });
      assert.equal(solo.organizationId, null);
      assert.deepEqual(solo.consent, { communitySupply: true, trainingUse: false });
      assert.deepEqual(await peer().getAccount(solo.id), solo);
      assert.equal(await store().getAccount('acct_missing'), null);
      const listed = (await store().listAccounts()).map((account) => account.id);
      assert.ok(listed.includes(member.id) && listed.includes(solo.id));

      const updated = await store().updateAccount(solo.id, { communitySupply: false, rate: null });
      assert.deepEqual(updated, { ...solo, consent: { communitySupply: false, trainingUse: false }, rate: null });
      assert.equal(await store().updateAccount('acct_missing', { name: 'x' }), null);
    });

    test('an account in a missing organization is not created', async () => {
      const before = (await store().listAccounts()).length;
      await assert.rejects(
        store().createAccount({ name: 'Orphan', organizationId: 'org_missing' }),
        (error: unknown) => error instanceof GatewayError && error.status === 404,
      );
      assert.equal((await store().listAccounts()).length, before);
    });

    test('keys: create, find by hash and id, list by owner, revoke', async () => {
      const account = await store().createAccount({ name: 'Keys' });
      const organization = await store().createOrganization({ name: 'Keys org' });
      const accountOwner = { kind: 'account', id: account.id } as const;
      const organizationOwner = { kind: 'organization', id: organization.id } as const;
      const hash = randomHash();
      const plain = await store().createKey({ owner: accountOwner, hash, displayPrefix: 'gateway_AbCd' });
      assert.match(plain.id, /^key_[0-9a-z]{27}$/);
      assert.deepEqual(plain, {
        id: plain.id,
        owner: accountOwner,
        name: null,
        hash,
        displayPrefix: 'gateway_AbCd',
        scopes: null,
        allowedModels: null,
        limits: null,
        createdAt: plain.createdAt,
        revokedAt: null,
      });
      const restricted = await store().createKey({
        owner: accountOwner,
        name: 'ci',
        hash: randomHash(),
        displayPrefix: 'gateway_EfGh',
        scopes: [],
        allowedModels: ['model-a', 'model-b'],
        limits: { requests_per_minute: 60, spend_limit_usd: '12.5' },
      });
      assert.deepEqual(restricted.scopes, [], 'an empty scope list is not "unrestricted"');
      assert.deepEqual(restricted.allowedModels, ['model-a', 'model-b']);
      assert.deepEqual(restricted.limits, { requests_per_minute: 60, spend_limit_usd: '12.5' });
      const orgKey = await store().createKey({ owner: organizationOwner, hash: randomHash(), displayPrefix: 'gateway_IjKl' });

      assert.deepEqual(await peer().getKeyByHash(hash), plain);
      assert.deepEqual(await peer().getKey(restricted.id), restricted);
      assert.equal(await store().getKeyByHash(randomHash()), null);
      assert.equal(await store().getKey('key_missing'), null);
      assert.deepEqual(
        (await store().listKeys(accountOwner)).map((key) => key.id),
        [plain.id, restricted.id],
      );
      assert.deepEqual(
        (await store().listKeys(organizationOwner)).map((key) => key.id),
        [orgKey.id],
      );
      const all = (await store().listKeys()).map((key) => key.id);
      assert.ok([plain.id, restricted.id, orgKey.id].every((id) => all.includes(id)));

      await assert.rejects(store().createKey({ owner: accountOwner, hash, displayPrefix: 'gateway_dup' }), 'hashes are unique');

      const revoked = await store().revokeKey(plain.id, 1_000);
      assert.equal(revoked?.revokedAt, 1_000);
      assert.equal((await store().revokeKey(plain.id, 2_000))?.revokedAt, 1_000, 'the first revocation time stands');
      assert.equal((await peer().getKeyByHash(hash))?.revokedAt, 1_000);
      assert.equal(await store().revokeKey('key_missing', 1_000), null);
    });
  });
}
