/**
 * A numbered schema change. Each engine keeps its own list (sqlite.ts, postgres.ts) with the same
 * versions and names, so that the two schemas stay parallel; a store applies, at open and in one
 * transaction, every version its database has not recorded in `schema_migrations`.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  /** One or more statements, run as a script. */
  readonly sql: string;
}

/**
 * The migrations still to apply, in order. A database already migrated past the newest version this
 * build knows was written by a newer build; running on it could corrupt data, so opening fails.
 */
export function pendingMigrations(known: readonly Migration[], applied: ReadonlySet<number>): Migration[] {
  const newest = Math.max(0, ...known.map((migration) => migration.version));
  const unknown = [...applied].filter((version) => version > newest);
  if (unknown.length > 0) {
    throw new Error(`the database schema is at version ${Math.max(...unknown)}, newer than this build supports (${newest}); upgrade the gateway`);
  }
  return known.filter((migration) => !applied.has(migration.version)).sort((a, b) => a.version - b.version);
}
