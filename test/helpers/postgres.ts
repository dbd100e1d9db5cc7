/**
 * The PostgreSQL the tests use, and the schemas they work in: every test file, gateway or group of
 * server processes gets a schema of its own, dropped when it is done.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The test database; override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name, `<prefix>_` and 12 hex digits. */
export function newSchemaName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/**
 * The test database's URL with `schema` on its search path: what a server process or the `gateway`
 * command is given (neither has a schema setting of its own).
 */
export function schemaUrl(schema: string): string {
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.href;
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
