/**
 * Organizations, accounts and API keys on PostgreSQL. Every owner gets its wallet row in the same
 * statement that creates it, so that its balance reads as zero and a zero-cost reservation succeeds
 * before any credit.
 */
import { errors } from '../../core/errors.ts';
import { timeOrderedId } from '../../core/ids.ts';
import { accountFromRow, jsonText, keyFromRow, newOwnerColumns, organizationFromRow, ownerPatchColumns, type OwnerColumns, type Row } from '../rows.ts';
import type { DirectoryStore, OwnerKind, OwnerPatch } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';

type OwnerTable = 'organizations' | 'accounts';

/** The statements organizations and accounts share: they differ only in the account's organization. */
function ownerStatements(database: PostgresDatabase, table: OwnerTable) {
  const get: Statement = { name: `gateway_${table}_get`, text: `SELECT * FROM ${table} WHERE id = $1` };
  const list: Statement = { name: `gateway_${table}_list`, text: `SELECT * FROM ${table} ORDER BY id` };
  const update: Statement = {
    name: `gateway_${table}_update`,
    text: `UPDATE ${table} SET
             name = COALESCE($2, name),
             community_supply = COALESCE($3::boolean, community_supply),
             training_use = COALESCE($4::boolean, training_use),
             rate_numerator = CASE WHEN $5::boolean THEN $6::bigint ELSE rate_numerator END,
             rate_denominator = CASE WHEN $5::boolean THEN $7::bigint ELSE rate_denominator END
           WHERE id = $1
           RETURNING *`,
  };
  return {
    get: async (id: string) => (await database.query(get, [id])).rows[0] as Row | undefined,
    list: async () => (await database.query(list, [])).rows,
    update: async (id: string, patch: OwnerPatch) => {
      const columns = ownerPatchColumns(patch);
      const values = [id, columns.name, columns.community_supply, columns.training_use, columns.set_rate, columns.rate_numerator, columns.rate_denominator];
      return (await database.query(update, values)).rows[0] as Row | undefined;
    },
  };
}

/** Inserts an owner row and its wallet in one statement; `source` yields the row or nothing. */
function insertOwner(table: OwnerTable, kind: OwnerKind, columns: string, source: string, name = `gateway_${table}_insert`): Statement {
  return {
    name,
    text: `WITH inserted AS (
             INSERT INTO ${table} (${columns}) ${source} RETURNING *
           ), wallet AS (
             INSERT INTO wallets (owner_kind, owner_id) SELECT '${kind}', id FROM inserted
           )
           SELECT * FROM inserted`,
  };
}

const INSERT_ORGANIZATION = insertOwner(
  'organizations',
  'organization',
  'id, name, community_supply, training_use, rate_numerator, rate_denominator, created_at',
  'VALUES ($1, $2, $3::boolean, $4::boolean, $5::bigint, $6::bigint, $7::bigint)',
);

const ACCOUNT_COLUMNS = 'id, name, community_supply, training_use, rate_numerator, rate_denominator, created_at, organization_id';
const ACCOUNT_VALUES = 'SELECT $1, $2, $3::boolean, $4::boolean, $5::bigint, $6::bigint, $7::bigint, $8::text';

// Inserts nothing when the organization does not exist, so the caller can report it.
const INSERT_ACCOUNT = insertOwner(
  'accounts',
  'account',
  ACCOUNT_COLUMNS,
  `${ACCOUNT_VALUES} WHERE $8::text IS NULL OR EXISTS (SELECT 1 FROM organizations WHERE id = $8::text)`,
);

// Inserts nothing unless the directory is empty; run under FIRST_ACCOUNT_LOCK, in a transaction
// of its own, so that its snapshot is taken after any concurrent first account committed.
const INSERT_FIRST_ACCOUNT = insertOwner(
  'accounts',
  'account',
  ACCOUNT_COLUMNS,
  `${ACCOUNT_VALUES} WHERE NOT EXISTS (SELECT 1 FROM accounts) AND NOT EXISTS (SELECT 1 FROM organizations)`,
  'gateway_accounts_insert_first',
);

const DIRECTORY_IS_EMPTY: Statement = {
  name: 'gateway_directory_is_empty',
  text: 'SELECT NOT EXISTS (SELECT 1 FROM accounts) AND NOT EXISTS (SELECT 1 FROM organizations) AS empty',
};

const INSERT_KEY: Statement = {
  name: 'gateway_keys_insert',
  text: `INSERT INTO api_keys (id, owner_kind, owner_id, name, hash, display_prefix, scopes, allowed_models, limits, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         RETURNING *`,
};
const KEY_BY_HASH: Statement = { name: 'gateway_keys_by_hash', text: 'SELECT * FROM api_keys WHERE hash = $1' };
const KEY_BY_ID: Statement = { name: 'gateway_keys_by_id', text: 'SELECT * FROM api_keys WHERE id = $1' };
const ALL_KEYS: Statement = { name: 'gateway_keys_all', text: 'SELECT * FROM api_keys ORDER BY id' };
const OWNER_KEYS: Statement = {
  name: 'gateway_keys_by_owner',
  text: 'SELECT * FROM api_keys WHERE owner_kind = $1 AND owner_id = $2 ORDER BY id',
};
// The first revocation time stands: revoking twice does not move it.
const REVOKE_KEY: Statement = {
  name: 'gateway_keys_revoke',
  text: 'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING *',
};

const SET_KEY_LIMITS: Statement = { name: 'gateway_keys_set_limits', text: 'UPDATE api_keys SET limits = $2 WHERE id = $1 RETURNING *' };
const SET_ORGANIZATION_LIMITS: Statement = {
  name: 'gateway_organizations_set_limits',
  text: 'UPDATE organizations SET limits = $2 WHERE id = $1 RETURNING *',
};

function ownerValues(id: string, columns: OwnerColumns, createdAt: number): unknown[] {
  return [id, columns.name, columns.community_supply, columns.training_use, columns.rate_numerator, columns.rate_denominator, createdAt];
}

export function postgresDirectory(database: PostgresDatabase, now: () => number): DirectoryStore {
  const organizations = ownerStatements(database, 'organizations');
  const accounts = ownerStatements(database, 'accounts');

  async function oneKey(statement: Statement, values: unknown[]) {
    const row = (await database.query(statement, values)).rows[0];
    return row ? keyFromRow(row) : null;
  }

  return {
    async createOrganization(input) {
      const values = ownerValues(timeOrderedId('org'), newOwnerColumns(input), now());
      return organizationFromRow((await database.query(INSERT_ORGANIZATION, values)).rows[0]);
    },
    async getOrganization(id) {
      const row = await organizations.get(id);
      return row ? organizationFromRow(row) : null;
    },
    async listOrganizations() {
      return (await organizations.list()).map(organizationFromRow);
    },
    async updateOrganization(id, patch) {
      const row = await organizations.update(id, patch);
      return row ? organizationFromRow(row) : null;
    },

    async createFirstAccount(input) {
      const values = [...ownerValues(timeOrderedId('acct'), newOwnerColumns(input), now()), null];
      const row = await database.transaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway.first-account.${database.schema ?? ''}`]);
        return (await client.query({ name: INSERT_FIRST_ACCOUNT.name, text: INSERT_FIRST_ACCOUNT.text, values })).rows[0];
      });
      return row ? accountFromRow(row) : null;
    },
    async isDirectoryEmpty() {
      return (await database.query(DIRECTORY_IS_EMPTY, [])).rows[0].empty === true;
    },
    async createAccount(input) {
      const values = [...ownerValues(timeOrderedId('acct'), newOwnerColumns(input), now()), input.organizationId ?? null];
      const row = (await database.query(INSERT_ACCOUNT, values)).rows[0];
      if (!row) throw errors.notFound('Organization');
      return accountFromRow(row);
    },
    async getAccount(id) {
      const row = await accounts.get(id);
      return row ? accountFromRow(row) : null;
    },
    async listAccounts() {
      return (await accounts.list()).map(accountFromRow);
    },
    async updateAccount(id, patch) {
      const row = await accounts.update(id, patch);
      return row ? accountFromRow(row) : null;
    },

    async createKey(input) {
      const values = [
        timeOrderedId('key'),
        input.owner.kind,
        input.owner.id,
        input.name ?? null,
        input.hash,
        input.displayPrefix,
        jsonText(input.scopes),
        jsonText(input.allowedModels),
        jsonText(input.limits),
        now(),
      ];
      return keyFromRow((await database.query(INSERT_KEY, values)).rows[0]);
    },
    async getKeyByHash(hash) {
      return oneKey(KEY_BY_HASH, [hash]);
    },
    async getKey(id) {
      return oneKey(KEY_BY_ID, [id]);
    },
    async listKeys(owner) {
      const { rows } = owner ? await database.query(OWNER_KEYS, [owner.kind, owner.id]) : await database.query(ALL_KEYS, []);
      return rows.map(keyFromRow);
    },
    async revokeKey(id, at) {
      return oneKey(REVOKE_KEY, [id, at]);
    },
    async setKeyLimits(id, limits) {
      return oneKey(SET_KEY_LIMITS, [id, jsonText(limits)]);
    },
    async setOrganizationLimits(id, limits) {
      const row = (await database.query(SET_ORGANIZATION_LIMITS, [id, jsonText(limits)])).rows[0];
      return row ? organizationFromRow(row) : null;
    },
  };
}
