/**
 * The process settings read from the environment, in one place, so the server (`npm start`,
 * `gateway serve`) and the administrative CLI resolve storage the same way.
 */
import { resolve } from 'node:path';
import { MIN_OPERATOR_SECRET_LENGTH } from '../outputs/secret.ts';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from './server-limits.ts';
import { tracingSettings, TracingSettingsError, type TracingSettings } from '../telemetry/settings.ts';
import type { StreamDecoding } from '../protocols/protocol.ts';

export interface StorageSettings {
  /** Holds the SQLite file and the blob folder. */
  readonly dataDir: string;
  /** `postgres://…` selects PostgreSQL; undefined selects the embedded SQLite store. */
  readonly databaseUrl: string | undefined;
  /**
   * A folder for stored outputs (GATEWAY_BLOB_DIR), shared by every instance; undefined keeps them
   * in PostgreSQL with DATABASE_URL, else in `<dataDir>/blobs`.
   */
  readonly blobDir?: string;
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
  /** How long a stopping server lets in-flight work finish before it cuts what remains (GATEWAY_DRAIN_TIMEOUT_MS). */
  readonly drainTimeoutMs: number;
  /** The secret output URLs are signed with (GATEWAY_OUTPUT_SECRET); undefined: the data dir's (outputs/secret.ts). */
  readonly outputSecret: string | undefined;
  /** The origin of signed output URLs (GATEWAY_PUBLIC_URL); undefined: the origin each request reached. */
  readonly publicUrl: string | undefined;
  /** Connection caps and the body budget (docs/security.md). */
  readonly serverLimits: ServerLimits;
  /** OpenTelemetry tracing from the standard OTEL_* variables (docs/operations.md, "Tracing"); undefined: off. */
  readonly tracing: TracingSettings | undefined;
  /** How upstream streams' text deltas are read (GATEWAY_STREAM_DECODING). */
  readonly streamDecoding: StreamDecoding;
}

/** `GATEWAY_REQUEST_TIMEOUT_MS` unset: a 5 MiB body still arrives in time at under 1 Mbit/s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** `GATEWAY_DRAIN_TIMEOUT_MS` unset. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

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
  const drainText = nonEmpty(env.GATEWAY_DRAIN_TIMEOUT_MS);
  if (drainText !== undefined && !/^[1-9]\d{0,8}$/.test(drainText)) {
    throw new SettingsError(`GATEWAY_DRAIN_TIMEOUT_MS must be a positive number of milliseconds, got '${env.GATEWAY_DRAIN_TIMEOUT_MS}'`);
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
    drainTimeoutMs: drainText === undefined ? DEFAULT_DRAIN_TIMEOUT_MS : Number(drainText),
    outputSecret: readOutputSecret(env.GATEWAY_OUTPUT_SECRET),
    publicUrl: readPublicUrl(env.GATEWAY_PUBLIC_URL),
    serverLimits: {
      maxConnections: positiveInteger(env, 'GATEWAY_MAX_CONNECTIONS', DEFAULT_SERVER_LIMITS.maxConnections),
      maxConnectionsPerAddress: positiveInteger(env, 'GATEWAY_MAX_CONNECTIONS_PER_ADDRESS', DEFAULT_SERVER_LIMITS.maxConnectionsPerAddress),
      bodyBudgetBytes: positiveInteger(env, 'GATEWAY_BODY_BUDGET_BYTES', DEFAULT_SERVER_LIMITS.bodyBudgetBytes),
    },
    tracing: readTracingSettings(env),
    streamDecoding: readStreamDecoding(env.GATEWAY_STREAM_DECODING),
  };
}

/** GATEWAY_STREAM_DECODING: `templates` when unset. */
export function readStreamDecoding(value: string | undefined): StreamDecoding {
  const decoding = nonEmpty(value) ?? 'templates';
  if (decoding !== 'templates' && decoding !== 'full') throw new SettingsError(`GATEWAY_STREAM_DECODING must be one of templates, full, got '${value}'`);
  return decoding;
}

function readTracingSettings(env: Readonly<Record<string, string | undefined>>): TracingSettings | undefined {
  try {
    return tracingSettings(env);
  } catch (error) {
    if (error instanceof TracingSettingsError) throw new SettingsError(error.message);
    throw error;
  }
}

/** A positive decimal integer (no sign, exponent or hex), or `fallback` when unset. */
function positiveInteger(env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number {
  const text = nonEmpty(env[name]);
  if (text === undefined) return fallback;
  if (!/^[1-9]\d{0,14}$/.test(text)) throw new SettingsError(`${name} must be a positive whole number, got '${env[name]}'`);
  return Number(text);
}

function readStorageSettings(env: Readonly<Record<string, string | undefined>>): StorageSettings {
  const databaseUrl = nonEmpty(env.DATABASE_URL);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new SettingsError('DATABASE_URL must be a postgres:// URL (leave it unset for the embedded SQLite store)');
  }
  const blobDir = nonEmpty(env.GATEWAY_BLOB_DIR);
  return { dataDir: resolve(nonEmpty(env.GATEWAY_DATA_DIR) ?? './data'), databaseUrl, ...(blobDir === undefined ? {} : { blobDir: resolve(blobDir) }) };
}

function readOutputSecret(value: string | undefined): string | undefined {
  const secret = nonEmpty(value);
  if (secret !== undefined && secret.length < MIN_OPERATOR_SECRET_LENGTH) {
    // The value itself is never printed: it is a secret even when it is too short.
    throw new SettingsError(`GATEWAY_OUTPUT_SECRET must be at least ${MIN_OPERATOR_SECRET_LENGTH} characters long, got ${secret.length}`);
  }
  return secret;
}

/** An http(s) origin, optionally with a path prefix (a gateway behind a proxy's sub-path); no query. */
function readPublicUrl(value: string | undefined): string | undefined {
  const text = nonEmpty(value);
  if (text === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new SettingsError(`GATEWAY_PUBLIC_URL must be an http:// or https:// URL, got '${text}'`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new SettingsError(`GATEWAY_PUBLIC_URL must be an http:// or https:// URL without query, fragment or credentials, got '${text}'`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
