/**
 * The PostgreSQL the tests use, and where they work in it. A gateway under test gets a database of
 * its own, cloned from a template that holds every migration (`freshDatabase`): a clone is a file
 * copy of a few milliseconds where migrating a new schema costs the server about half a second of
 * work, and a run makes hundreds. Tests about migrating itself, and tests that share one database
 * between several connections of their own, work in fresh schemas (`newSchemaName`).
 */
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_MIGRATIONS } from '../../src/storage/migrations/postgres.ts';
import { openStore } from '../../src/storage/open-store.ts';

/** The test database; override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name, `<prefix>_` and 12 hex digits. */
export function newSchemaName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Drops the schemas and everything in them. */
export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A database of a test's own, migrated to the newest version. */
export interface TestDatabase {
  /** Its name, and the URL that connects to it (what `DATABASE_URL` is given). */
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

/** Clones of the template are named `gateway_test_<hex>_<seconds since the epoch>`. */
const CLONE_PREFIX = 'gateway_test_';
/** A clone older than this is a leftover of a run that was killed: the next run drops it. */
const LEFTOVER_AFTER_SECONDS = 3_600;

/**
 * A new database cloned from the template of the current migrations. The template is made by the
 * first test that needs it (the others wait on an advisory lock) and named after a hash of every
 * migration, so a changed or added migration makes a new one; old templates of other migrations and
 * clones left by killed runs are dropped then.
 */
export async function freshDatabase(): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  try {
    const template = await ensureTemplate(admin);
    const name = `${CLONE_PREFIX}${randomBytes(5).toString('hex')}_${Math.floor(Date.now() / 1000)}`;
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template} STRATEGY WAL_LOG`);
    return {
      name,
      url: databaseUrl(name),
      async drop() {
        const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await client.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  return url.href;
}

let templateName: string | undefined;

/** Templates are named `gateway_template_<hash of the migrations>_<seconds since the epoch>`. */
const TEMPLATE_PREFIX = 'gateway_template_';
/** A template of other migrations (another branch's, an older checkout's) is dropped once unmade this long. */
const STALE_TEMPLATE_SECONDS = 86_400;

async function ensureTemplate(admin: pg.Client): Promise<string> {
  if (templateName !== undefined) return templateName;
  const hash = createHash('sha256');
  for (const migration of POSTGRES_MIGRATIONS) hash.update(`${migration.version}\0${migration.sql}\0`);
  const named = `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}_`;
  await admin.query('SELECT pg_advisory_lock(hashtext($1))', ['gateway-test-template']);
  try {
    const { rows } = await admin.query<{ datname: string; datistemplate: boolean }>(
      `SELECT datname, datistemplate FROM pg_database WHERE datname LIKE '${TEMPLATE_PREFIX}%' OR datname LIKE '${CLONE_PREFIX}%'`,
    );
    const now = Math.floor(Date.now() / 1000);
    const made = (name: string) => Number(name.slice(name.lastIndexOf('_') + 1));
    templateName = rows.find((row) => row.datistemplate && row.datname.startsWith(named))?.datname;
    if (templateName === undefined) {
      const name = `${named}${now}`;
      // Made under another name and renamed once whole: a run killed half-way leaves no template behind.
      const building = `${TEMPLATE_PREFIX}building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const store = await openStore({ databaseUrl: databaseUrl(building), dataDir: '' });
      await store.close();
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      await admin.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true`);
      templateName = name;
    }
    for (const { datname, datistemplate } of rows) {
      const stale = datname.startsWith(TEMPLATE_PREFIX)
        ? datistemplate && datname !== templateName && made(datname) < now - STALE_TEMPLATE_SECONDS
        : made(datname) < now - LEFTOVER_AFTER_SECONDS;
      if (!stale) continue;
      if (datistemplate) await admin.query(`ALTER DATABASE ${datname} WITH IS_TEMPLATE false`);
      await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } finally {
    await admin.query('SELECT pg_advisory_unlock(hashtext($1))', ['gateway-test-template']);
  }
  return templateName;
}
