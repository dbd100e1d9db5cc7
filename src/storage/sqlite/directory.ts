/**
 * Organizations, accounts and API keys on SQLite. Every owner gets its wallet row when it is
 * created, so that its balance reads as zero and a zero-cost reservation succeeds before any credit.
 */
import { errors } from '../../core/errors.ts';
import { timeOrderedId } from '../../core/ids.ts';
import { accountFromRow, jsonText, keyFromRow, newOwnerColumns, organizationFromRow, ownerPatchColumns, type Row } from '../rows.ts';
import type { DirectoryStore, NewAccount, OwnerKind, OwnerPatch } from '../store.ts';
import type { SqliteDatabase } from './database.ts';

type OwnerTable = 'organizations' | 'accounts';

/** The statements organizations and accounts share: they differ only in the account's organization. */
function ownerStatements(database: SqliteDatabase, table: OwnerTable, kind: OwnerKind) {
  const get = database.prepare(`SELECT * FROM ${table} WHERE id = ?`, { bigints: true });
  const list = database.prepare(`SELECT * FROM ${table} ORDER BY id`, { bigints: true });
  const update = database.prepare(
    `UPDATE ${table} SET
       name = COALESCE(:name, name),
       community_supply = COALESCE(:community_supply, community_supply),
       training_use = COALESCE(:training_use, training_use),
       rate_numerator = CASE WHEN :set_rate THEN :rate_numerator ELSE rate_numerator END,
       rate_denominator = CASE WHEN :set_rate THEN :rate_denominator ELSE rate_denominator END
     WHERE id = :id
     RETURNING *`,
    { bigints: true },
  );
  const openWallet = database.prepare(`INSERT INTO wallets (owner_kind, owner_id) VALUES ('${kind}', ?)`);
  return {
    get: (id: string) => get.get(id) as Row | undefined,
    list: () => list.all() as Row[],
    update: (id: string, patch: OwnerPatch) => update.get({ id, ...ownerPatchColumns(patch) }) as Row | undefined,
    openWallet: (id: string) => openWallet.run(id),
  };
}

export function sqliteDirectory(database: SqliteDatabase, now: () => number): DirectoryStore {
  const organizations = ownerStatements(database, 'organizations', 'organization');
  const accounts = ownerStatements(database, 'accounts', 'account');
  const insertOrganization = database.prepare(
    `INSERT INTO organizations (id, name, community_supply, training_use, rate_numerator, rate_denominator, created_at)
     VALUES (:id, :name, :community_supply, :training_use, :rate_numerator, :rate_denominator, :created_at)
     RETURNING *`,
    { bigints: true },
  );
  // Inserts nothing when the organization does not exist, so the caller can report it.
  const insertAccount = database.prepare(
    `INSERT INTO accounts (id, name, organization_id, community_supply, training_use, rate_numerator, rate_denominator, created_at)
     SELECT :id, :name, :organization_id, :community_supply, :training_use, :rate_numerator, :rate_denominator, :created_at
     WHERE :organization_id IS NULL OR EXISTS (SELECT 1 FROM organizations WHERE id = :organization_id)
     RETURNING *`,
    { bigints: true },
  );
  const insertKey = database.prepare(
    `INSERT INTO api_keys (id, owner_kind, owner_id, name, hash, display_prefix, scopes, allowed_models, limits, created_at)
     VALUES (:id, :owner_kind, :owner_id, :name, :hash, :display_prefix, :scopes, :allowed_models, :limits, :created_at)
     RETURNING *`,
  );
  const keyByHash = database.prepare('SELECT * FROM api_keys WHERE hash = ?');
  const keyById = database.prepare('SELECT * FROM api_keys WHERE id = ?');
  const allKeys = database.prepare('SELECT * FROM api_keys ORDER BY id');
  const ownerKeys = database.prepare('SELECT * FROM api_keys WHERE owner_kind = ? AND owner_id = ? ORDER BY id');
  // The first revocation time stands: revoking twice does not move it.
  const revokeKey = database.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ? RETURNING *');
  const setKeyLimits = database.prepare('UPDATE api_keys SET limits = ? WHERE id = ? RETURNING *');
  const setOrganizationLimits = database.prepare('UPDATE organizations SET limits = ? WHERE id = ? RETURNING *');

  const directoryIsEmpty = database.prepare('SELECT NOT EXISTS (SELECT 1 FROM accounts) AND NOT EXISTS (SELECT 1 FROM organizations) AS empty');

  /** Inside a transaction: the account row and its wallet. */
  function insertAccountWithWallet(input: NewAccount): Row {
    const inserted = insertAccount.get({
      id: timeOrderedId('acct'),
      organization_id: input.organizationId ?? null,
      ...newOwnerColumns(input),
      created_at: now(),
    }) as Row | undefined;
    if (!inserted) throw errors.notFound('Organization');
    accounts.openWallet(inserted.id as string);
    return inserted;
  }

  return {
    async createOrganization(input) {
      const row = database.transaction(() => {
        const inserted = insertOrganization.get({ id: timeOrderedId('org'), ...newOwnerColumns(input), created_at: now() }) as Row;
        organizations.openWallet(inserted.id as string);
        return inserted;
      });
      return organizationFromRow(row);
    },
    async getOrganization(id) {
      const row = organizations.get(id);
      return row ? organizationFromRow(row) : null;
    },
    async listOrganizations() {
      return organizations.list().map(organizationFromRow);
    },
    async updateOrganization(id, patch) {
      const row = organizations.update(id, patch);
      return row ? organizationFromRow(row) : null;
    },

    async createFirstAccount(input) {
      const row = database.transaction(() => (directoryIsEmpty.get()?.empty ? insertAccountWithWallet(input) : undefined));
      return row ? accountFromRow(row) : null;
    },
    async isDirectoryEmpty() {
      return Boolean(directoryIsEmpty.get()?.empty);
    },
    async createAccount(input) {
      return accountFromRow(database.transaction(() => insertAccountWithWallet(input)));
    },
    async getAccount(id) {
      const row = accounts.get(id);
      return row ? accountFromRow(row) : null;
    },
    async listAccounts() {
      return accounts.list().map(accountFromRow);
    },
    async updateAccount(id, patch) {
      const row = accounts.update(id, patch);
      return row ? accountFromRow(row) : null;
    },

    async createKey(input) {
      const row = insertKey.get({
        id: timeOrderedId('key'),
        owner_kind: input.owner.kind,
        owner_id: input.owner.id,
        name: input.name ?? null,
        hash: input.hash,
        display_prefix: input.displayPrefix,
        scopes: jsonText(input.scopes),
        allowed_models: jsonText(input.allowedModels),
        limits: jsonText(input.limits),
        created_at: now(),
      }) as Row;
      return keyFromRow(row);
    },
    async getKeyByHash(hash) {
      const row = keyByHash.get(hash) as Row | undefined;
      return row ? keyFromRow(row) : null;
    },
    async getKey(id) {
      const row = keyById.get(id) as Row | undefined;
      return row ? keyFromRow(row) : null;
    },
    async listKeys(owner) {
      const rows = (owner ? ownerKeys.all(owner.kind, owner.id) : allKeys.all()) as Row[];
      return rows.map(keyFromRow);
    },
    async revokeKey(id, at) {
      const row = revokeKey.get(at, id) as Row | undefined;
      return row ? keyFromRow(row) : null;
    },
    async setKeyLimits(id, limits) {
      const row = setKeyLimits.get(jsonText(limits), id) as Row | undefined;
      return row ? keyFromRow(row) : null;
    },
    async setOrganizationLimits(id, limits) {
      const row = setOrganizationLimits.get(jsonText(limits), id) as Row | undefined;
      return row ? organizationFromRow(row) : null;
    },
  };
}
