/**
 * The process settings read from the environment, in one place, so the server (`npm start`,
 * `gateway serve`) and the administrative CLI resolve storage the same way.
 */
import { resolve } from 'node:path';

export interface StorageSettings {
  /** Holds the SQLite file and the blob folder. */
  readonly dataDir: string;
  /** `postgres://…` selects PostgreSQL; undefined selects the embedded SQLite store. */
  readonly databaseUrl: string | undefined;
}

export interface Settings extends StorageSettings {
  readonly host: string;
  readonly port: number;
  /** The operator's config file; undefined serves the built-in demo catalog. */
  readonly configPath: string | undefined;
  /** Where the counted limits of keys live across instances (docs/limits.md); undefined keeps them in the process. */
  readonly redisUrl: string | undefined;
  /** Put before every Redis key, so that several gateways can share one Redis. */
  readonly redisPrefix: string;
  /** Bearer secret of the admin API; the admin API is off when undefined. */
  readonly adminKey: string | undefined;
  readonly logLevel: string;
  /** How long a client may take to send one whole request, headers and body (see app.ts). */
  readonly requestTimeoutMs: number;
}

/** `GATEWAY_REQUEST_TIMEOUT_MS` unset: a 5 MiB body still arrives in time at under 1 Mbit/s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** `GATEWAY_REDIS_PREFIX` unset. */
export const DEFAULT_REDIS_PREFIX = 'gateway:limits:';

export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}

const LOG_LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

export function readSettings(env: Readonly<Record<string, string | undefined>>): Settings {
  const portText = env.PORT?.trim() ?? '';
  // Decimal digits only: Number() would also take '0x1F90' or '1e3'.
  const port = portText === '' ? 8080 : /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535) throw new SettingsError(`PORT must be a port number, got '${env.PORT}'`);
  const logLevel = nonEmpty(env.LOG_LEVEL) ?? 'info';
  if (!LOG_LEVELS.has(logLevel)) throw new SettingsError(`LOG_LEVEL must be one of ${[...LOG_LEVELS].join(', ')}, got '${logLevel}'`);
  const redisUrl = nonEmpty(env.REDIS_URL);
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) throw new SettingsError('REDIS_URL must be a redis:// or rediss:// URL');
  const timeoutText = nonEmpty(env.GATEWAY_REQUEST_TIMEOUT_MS);
  if (timeoutText !== undefined && !/^[1-9]\d{0,8}$/.test(timeoutText)) {
    throw new SettingsError(`GATEWAY_REQUEST_TIMEOUT_MS must be a positive number of milliseconds, got '${env.GATEWAY_REQUEST_TIMEOUT_MS}'`);
  }
  return {
    ...readStorageSettings(env),
    host: nonEmpty(env.HOST) ?? '127.0.0.1',
    port,
    configPath: nonEmpty(env.GATEWAY_CONFIG),
    redisUrl,
    redisPrefix: nonEmpty(env.GATEWAY_REDIS_PREFIX) ?? DEFAULT_REDIS_PREFIX,
    adminKey: nonEmpty(env.GATEWAY_ADMIN_KEY),
    logLevel,
    requestTimeoutMs: timeoutText === undefined ? DEFAULT_REQUEST_TIMEOUT_MS : Number(timeoutText),
  };
}

function readStorageSettings(env: Readonly<Record<string, string | undefined>>): StorageSettings {
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new SettingsError('DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite store)');
  }
  return { dataDir: resolve(nonEmpty(env.GATEWAY_DATA_DIR) ?? './data'), databaseUrl };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
