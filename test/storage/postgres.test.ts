/**
 * The contract against PostgreSQL, in a schema of its own that is dropped at the end. PostgreSQL is
 * required: when it is unreachable these tests fail rather than skip.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { GatewayError } from '../../src/core/errors.ts';
import { POSTGRES_MIGRATIONS } from '../../src/storage/migrations/postgres.ts';
import { SQLITE_MIGRATIONS } from '../../src/storage/migrations/sqlite.ts';
import { openStore } from '../../src/storage/open-store.ts';
import { storeContract } from './contract.ts';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dataDir = tmpdir();
const schemas: string[] = [];

function newSchema(): string {
  const schema = `test_storage_${randomBytes(6).toString('hex')}`;
  schemas.push(schema);
  return schema;
}

after(async () => {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
});

const contractSchema = newSchema();
storeContract(
  'postgres',
  () => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema: contractSchema, poolSize: 8 }),
  () => {
    const schema = newSchema();
    return () => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 4 });
  },
);

describe('postgres specifics', () => {
  test('instances starting at once on a new schema apply each migration exactly once', async () => {
    const schema = newSchema();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema, poolSize: 2 })),
    );
    await Promise.all(stores.map((store) => store.close()));
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      assert.deepEqual(rows.map((row) => row.version), POSTGRES_MIGRATIONS.map((migration) => migration.version));
    } finally {
      await client.end();
    }
  });

  test('both engines know the same migrations', () => {
    const outline = (migrations: typeof SQLITE_MIGRATIONS) => migrations.map(({ version, name }) => ({ version, name }));
    assert.deepEqual(outline(POSTGRES_MIGRATIONS), outline(SQLITE_MIGRATIONS));
  });

  test('schema names are plain identifiers', async () => {
    await assert.rejects(
      openStore({ databaseUrl: TEST_DATABASE_URL, dataDir, schema: 'x; DROP TABLE y' }),
      RangeError,
    );
  });

  test('a lost database is reported as a retryable storage_unavailable, and idle losses are logged', async () => {
    const proxy = await startProxy(new URL(TEST_DATABASE_URL));
    try {
      const warnings: string[] = [];
      const logger = { info() {}, error() {}, warn: (_details: object, message: string) => void warnings.push(message) };
      const url = new URL(TEST_DATABASE_URL);
      url.host = `127.0.0.1:${proxy.port}`;
      const store = await openStore({ databaseUrl: url.href, dataDir, schema: contractSchema, poolSize: 1, logger });
      try {
        await store.currentVersion();
        await proxy.shutDown();
        await waitFor(() => warnings.includes('idle PostgreSQL connection failed'));
        await assert.rejects(
          store.currentVersion(),
          (error: unknown) =>
            error instanceof GatewayError && error.status === 503 && error.code === 'storage_unavailable' && error.retryable,
        );
      } finally {
        await store.close();
      }
    } finally {
      await proxy.shutDown();
    }
  });
});

/** A loopback TCP relay to the database that the test can pull the plug on (idempotently). */
async function startProxy(target: URL): Promise<{ port: number; shutDown(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const [socket, peer] of [[client, upstream], [upstream, client]]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        peer.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    async shutDown() {
      const closed = server.listening ? new Promise((resolve) => server.close(resolve)) : undefined;
      const gone = [...sockets].map((socket) => new Promise((resolve) => socket.once('close', resolve)));
      for (const socket of sockets) socket.destroy();
      await Promise.all([closed, ...gone]);
    },
  };
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
