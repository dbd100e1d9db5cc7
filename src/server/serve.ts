/**
 * The server process (`npm start`, `gateway serve`): settings from the environment, the config file,
 * the store, first-start seeding, the listener, and a graceful stop on SIGINT/SIGTERM.
 */
import { getCompileCacheDir } from 'node:module';
import { ensureDemoAccount, type DemoAccount } from '../admin/demo-account.ts';
import { createDemoOperator } from '../people/demo-operator.ts';
import type { IssuedLink } from '../people/users.ts';
import { ConfigError, loadServedConfig, type ServedConfig } from '../config/load.ts';
import { ServerLockedError } from '../storage/sqlite/server-lock.ts';
import { configErrorLine } from './config-error.ts';
import { createLogger, createRuntime, type GatewayRuntime } from './compose.ts';
import { readSettings, SettingsError, type Settings } from './settings.ts';
import { loadTracing } from '../telemetry/load.ts';

/** Runs until a signal stops it; returns the process exit code for failures at start. */
export async function serve(env: Readonly<Record<string, string | undefined>>): Promise<number | undefined> {
  let settings: Settings;
  let served: ServedConfig;
  try {
    settings = readSettings(env);
    served = loadServedConfig(settings.configPath);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(configErrorLine(error));
      return 1;
    }
    if (error instanceof SettingsError) {
      console.error(`settings error: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const { config } = served;

  const logger = createLogger(settings.logLevel, process.stdout.isTTY === true);
  let runtime: GatewayRuntime;
  try {
    const tracing = await loadTracing(settings.tracing, env, logger);
    runtime = await createRuntime({
      tracing,
      config,
      storage: settings,
      adminKey: settings.adminKey,
      env,
      logger,
      drainOnClose: true,
      requestTimeoutMs: settings.requestTimeoutMs,
      serverLimits: settings.serverLimits,
      outputSecret: settings.outputSecret,
      publicUrl: settings.publicUrl,
      streamDecoding: settings.streamDecoding,
      redis: settings.redisUrl === undefined ? undefined : { url: settings.redisUrl, prefix: settings.redisPrefix },
    });
  } catch (error) {
    if (error instanceof ServerLockedError) {
      // Not a failure of this process but an operator's mistake, said in one line.
      console.error(error.message);
      return 1;
    }
    // Typically the database: a wrong DATABASE_URL, PostgreSQL down, an unwritable data dir.
    logger.fatal({ err: error }, 'gateway failed to start');
    return 1;
  }
  let url: string;
  let demo: DemoAccount | null = null;
  let demoOperator: IssuedLink | null = null;
  let emptyDirectory = false;
  try {
    // The demo account is for the demo catalog: with a real one, the operator creates accounts.
    if (served.demoCatalog) demo = await ensureDemoAccount(runtime.store, config);
    else emptyDirectory = await runtime.store.isDirectoryEmpty();
    // Beside it, the demo operator and the one-time link that signs them in to the dashboard.
    if (demo) demoOperator = await createDemoOperator(runtime.store, Date.now);
    url = await runtime.listen(settings.host, settings.port);
  } catch (error) {
    logger.fatal({ err: error }, 'gateway failed to start');
    await runtime.close();
    return 1;
  }
  logger.info(
    {
      url,
      store: runtime.store.engine,
      config: settings.configPath ?? 'built-in demo catalog',
      catalog: served.demoCatalog ? 'demo' : 'configured',
      admin: settings.adminKey !== undefined,
      streamDecoding: settings.streamDecoding,
      // The runtime flags, the allocator's arenas and the compile cache (`npm start` and `gateway
      // serve` set the same).
      nodeFlags: process.execArgv,
      mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? null,
      compileCache: getCompileCacheDir() ?? null,
    },
    'gateway listening',
  );
  if (demo) printDemoKey(demo, url, demoOperator && `${(settings.publicUrl ?? url).replace(/\/$/, '')}${demoOperator.path}`);
  if (emptyDirectory) {
    logger.info(
      'no account yet: create one with `gateway accounts create <name>`, give it credit with `gateway credit add --account <id> <usd>` ' +
        'and a key with `gateway keys create --account <id>` (or the admin API: POST /admin/v1/accounts, /admin/v1/accounts/{id}/credit, /admin/v1/keys)',
    );
  }

  // The first signal drains (docs/operations.md, "Graceful drain"); a second cuts the remaining
  // streams now, each settled for what it delivered; a third exits at once.
  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 2) {
      logger.warn({ signal }, 'gateway cutting its remaining streams');
      runtime.cutStreams();
      return;
    }
    if (signals > 2) process.exit(130);
    logger.info({ signal, deadlineMs: settings.drainTimeoutMs }, 'gateway draining');
    runtime.drain(settings.drainTimeoutMs).then(
      () => {
        logger.info('gateway stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'gateway stopped with an error');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return undefined;
}

function printDemoKey(demo: DemoAccount, url: string, operatorLink: string | null): void {
  const rule = '='.repeat(72);
  process.stdout.write(
    [
      rule,
      `Created a demo account (${demo.account.id}) with ${demo.creditUsd} USD of credit.`,
      'Its API key is shown only this once; keep it:',
      '',
      `    ${demo.apiKey}`,
      '',
      'Try it:',
      `    curl ${url}/v1/models -H "Authorization: Bearer ${demo.apiKey}"`,
      ...(operatorLink
        ? ['', 'The dashboard: this one-time link (valid a day) signs in the demo operator, who sets a password:', '', `    ${operatorLink}`]
        : []),
      rule,
      '',
    ].join('\n'),
  );
}
