/**
 * Which database an administrative command opens. It acts on the server's database, so it never
 * creates one by accident: with `DATABASE_URL` or `GATEWAY_DATA_DIR` set it opens what they name
 * (an operator may prepare accounts before the first start); without them it looks for the SQLite
 * file where `npm start` keeps it — `./data` of the current folder, then the install folder's
 * `data` — and says where it looked when it finds none.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SQLITE_FILE_NAME } from '../storage/open-store.ts';
import type { StorageSettings } from '../server/settings.ts';

/** `<install folder>/data`: where `npm start`, run in the install folder, keeps its database. */
const INSTALL_DATA_DIR = fileURLToPath(new URL('../../data', import.meta.url));

export class NoDatabaseError extends Error {
  override readonly name = 'NoDatabaseError';
}

export function locateDatabase<T extends StorageSettings>(settings: T, env: Readonly<Record<string, string | undefined>>): T {
  if (settings.databaseUrl !== undefined || (env.GATEWAY_DATA_DIR ?? '').trim() !== '') return settings;
  const searched = [...new Set([settings.dataDir, INSTALL_DATA_DIR])];
  const found = searched.find((folder) => existsSync(join(folder, SQLITE_FILE_NAME)));
  if (found !== undefined) return { ...settings, dataDir: found };
  throw new NoDatabaseError(
    `no gateway database found (looked for ${searched.map((folder) => join(folder, SQLITE_FILE_NAME)).join(' and ')}): ` +
      'start the server once (npm start), or set GATEWAY_DATA_DIR to its data folder (DATABASE_URL for PostgreSQL)',
  );
}
