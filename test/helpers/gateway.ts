/**
 * Starts the real gateway for a test: the same composition as `npm start` (every route, the real
 * store and catalog) on a throwaway SQLite data dir or a fresh PostgreSQL database, listening on
 * 127.0.0.1 on a free port, with one funded account and one API key.
 *
 *   const gateway = await startGateway();
 *   after(() => gateway.close());
 *   await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${gateway.apiKey}` } });
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { issueKey } from '../../src/admin/issue-key.ts';
import { DEMO_CONFIG_PATH, loadConfigFile, parseConfig, validateConfig } from '../../src/config/load.ts';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { usdToPicos } from '../../src/core/money.ts';
import type { RouteModule } from '../../src/http/route-module.ts';
import { createLogger, createRuntime, type GatewayRuntime } from '../../src/server/compose.ts';
import type { AppDeps } from '../../src/http/deps.ts';
import type { ServerLimits } from '../../src/server/server-limits.ts';
import { readStreamDecoding } from '../../src/server/settings.ts';
import type { Account, Consent, KeyLimits, OwnerRef, Store } from '../../src/storage/store.ts';
import type { Resolver } from '../../src/webhooks/addresses.ts';
import type { RedisBackendOptions } from '../../src/limits/redis-backend.ts';

import { freshDatabase } from './postgres.ts';

export interface StartGatewayOptions {
  /** A config object or YAML text; the built-in demo catalog when omitted. */
  readonly config?: GatewayConfig | string;
  /** The environment provider credentials are read from (nothing from process.env leaks in). */
  readonly env?: Record<string, string>;
  readonly engine?: 'sqlite' | 'postgres';
  /** Credit of the test account, USD decimal string ("0" for none). Default "100". */
  readonly creditUsd?: string;
  readonly consent?: Partial<Consent>;
  /** Scopes of the default key; null or omitted = unrestricted. */
  readonly scopes?: string[] | null;
  readonly allowedModels?: string[] | null;
  /** Turns the admin API on with this bearer secret. */
  readonly adminKey?: string;
  /** Replaces the service's route modules (e.g. to add a test-only route). Default: every route. */
  readonly routes?: readonly RouteModule[];
  /** Where the gateway logs; silent unless TEST_LOG_LEVEL says otherwise. */
  readonly logger?: Logger;
  /** How long a client may take to send a request (the server's default when omitted). */
  readonly requestTimeoutMs?: number;
  /** Connection caps and the body budget (the server's defaults when omitted). */
  readonly serverLimits?: Partial<ServerLimits>;
  /** Replaces DNS for webhook deliveries. */
  readonly webhookResolver?: Resolver;
  /** The gateway's clock (epoch ms); the real one when omitted. */
  readonly now?: () => number;
  /** GATEWAY_OUTPUT_SECRET and GATEWAY_PUBLIC_URL (docs/outputs.md); the data dir's secret and each request's origin when omitted. */
  readonly outputSecret?: string;
  readonly publicUrl?: string;
  /** Keeps the counted limits in Redis (test/helpers/redis.ts) rather than in the process. */
  readonly redis?: RedisBackendOptions;
}

export interface CreateKeyOptions {
  /** Defaults to the test account. */
  readonly owner?: OwnerRef;
  readonly name?: string;
  readonly scopes?: string[] | null;
  readonly allowedModels?: string[] | null;
  readonly limits?: KeyLimits | null;
}

export interface TestGateway {
  /** `http://127.0.0.1:PORT`, without a trailing slash. */
  readonly baseUrl: string;
  /** The plaintext key of the test account. */
  readonly apiKey: string;
  readonly account: Account;
  readonly store: Store;
  readonly app: FastifyInstance;
  readonly deps: AppDeps;
  /** The running gateway; closing it stops the server and its store but keeps the database. */
  readonly runtime: GatewayRuntime;
  /** The environment in which the `gateway` command works on this gateway's database. */
  readonly cliEnv: Record<string, string>;
  /** Where its data is: another instance given these (and another data dir) shares its database. */
  readonly storage: { readonly dataDir: string; readonly databaseUrl: string | undefined };
  /** Issues another key (for the test account unless `owner` says otherwise); returns the plaintext. */
  createKey(options?: CreateKeyOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startGateway(options: StartGatewayOptions = {}): Promise<TestGateway> {
  const config = resolveConfig(options.config);
  const storage = await testStorage(options.engine ?? 'sqlite');
  let runtime: GatewayRuntime;
  try {
    runtime = await createRuntime({
      config,
      storage: storage.settings,
      adminKey: options.adminKey,
      env: options.env ?? {},
      logger: options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
      routes: options.routes,
      requestTimeoutMs: options.requestTimeoutMs,
      serverLimits: options.serverLimits,
      webhookResolver: options.webhookResolver,
      now: options.now,
      outputSecret: options.outputSecret,
      publicUrl: options.publicUrl,
      redis: options.redis,
      // The second pass of `npm test` (test/run.ts) decodes every stream in full.
      streamDecoding: readStreamDecoding(process.env.GATEWAY_STREAM_DECODING),
    });
  } catch (error) {
    await storage.dispose();
    throw error;
  }
  const { store } = runtime;
  try {
    const account = await store.createAccount({ name: 'test account', consent: options.consent });
    const owner: OwnerRef = { kind: 'account', id: account.id };
    const credit = usdToPicos(options.creditUsd ?? '100');
    if (credit > 0n) await store.addCredit(owner, credit, 'test credit');
    const createKey = async (keyOptions: CreateKeyOptions = {}) => {
      const issued = await issueKey(store, {
        owner: keyOptions.owner ?? owner,
        name: keyOptions.name ?? null,
        scopes: keyOptions.scopes ?? null,
        allowedModels: keyOptions.allowedModels ?? null,
        limits: keyOptions.limits ?? null,
      });
      return issued.plaintext;
    };
    const apiKey = await createKey({ name: 'test key', scopes: options.scopes, allowedModels: options.allowedModels });
    const baseUrl = await runtime.listen('127.0.0.1', 0);
    return {
      baseUrl,
      apiKey,
      account,
      store,
      app: runtime.app,
      deps: runtime.deps,
      runtime,
      cliEnv: storage.cliEnv,
      storage: storage.settings,
      createKey,
      close: async () => {
        try {
          await runtime.close();
        } finally {
          await storage.dispose();
        }
      },
    };
  } catch (error) {
    await runtime.close();
    await storage.dispose();
    throw error;
  }
}

function resolveConfig(config: GatewayConfig | string | undefined): GatewayConfig {
  const resolved = typeof config === 'string' ? parseConfig(config) : config ? validateConfig(structuredClone(config)) : structuredClone(demoConfig());
  // Pages are tested for what they show, back to back; their pacing has tests of its own
  // (test/dashboard/read-pacer.test.ts) and would only slow these down. Passwords are hashed at the
  // least cost the config allows: a sixth of the default's, and the dashboard's tests sign in often.
  return { ...resolved, dashboard: { read_share: 1, password_hashing: { n: 16_384, p: 1 }, ...resolved.dashboard } };
}

let demo: GatewayConfig | undefined;

/** The built-in demo catalog, read once per test file (parsing its YAML is a good part of a start). */
function demoConfig(): GatewayConfig {
  demo ??= loadConfigFile(DEMO_CONFIG_PATH);
  return demo;
}

interface TestStorage {
  readonly settings: { dataDir: string; databaseUrl: string | undefined };
  readonly cliEnv: Record<string, string>;
  dispose(): Promise<void>;
}

/** A temp data dir (blobs, and the SQLite file) plus, for PostgreSQL, a database of its own dropped afterwards. */
async function testStorage(engine: 'sqlite' | 'postgres'): Promise<TestStorage> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gateway-test-'));
  const removeDir = () => rm(dataDir, { recursive: true, force: true });
  if (engine === 'sqlite') return { settings: { dataDir, databaseUrl: undefined }, cliEnv: { GATEWAY_DATA_DIR: dataDir }, dispose: removeDir };
  const database = await freshDatabase();
  return {
    settings: { dataDir, databaseUrl: database.url },
    cliEnv: { GATEWAY_DATA_DIR: dataDir, DATABASE_URL: database.url },
    async dispose() {
      try {
        await database.drop();
      } finally {
        await removeDir();
      }
    },
  };
}
