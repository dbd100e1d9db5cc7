/**
 * The server process (`npm start`, `gateway serve`): settings from the environment, the config file,
 * the store, first-start seeding, the listener, and a graceful stop on SIGINT/SIGTERM.
 */
import { ensureDemoAccount, type DemoAccount } from '../admin/demo-account.ts';
import { ConfigError, DEMO_CONFIG_PATH, loadConfigFile } from '../config/load.ts';
import { ServerLockedError } from '../storage/sqlite/server-lock.ts';
import { configErrorLine } from './config-error.ts';
import type { GatewayConfig } from '../config/schema.ts';
import { createLogger, createRuntime, type GatewayRuntime } from './compose.ts';
import { readSettings, SettingsError, type Settings } from './settings.ts';

/** How long a stopping server waits for in-flight requests (streams) before closing their connections. */
const DRAIN_TIMEOUT_MS = 30_000;

/** Runs until a signal stops it; returns the process exit code for failures at start. */
export async function serve(env: Readonly<Record<string, string | undefined>>): Promise<number | undefined> {
  let settings: Settings;
  let config: GatewayConfig;
  try {
    settings = readSettings(env);
    config = loadConfigFile(settings.configPath ?? DEMO_CONFIG_PATH);
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

  const logger = createLogger(settings.logLevel);
  let runtime: GatewayRuntime;
  try {
    runtime = await createRuntime({
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
  let demo: DemoAccount | null;
  try {
    demo = await ensureDemoAccount(runtime.store, config);
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
      admin: settings.adminKey !== undefined,
      // The runtime flags (`npm start` and `gateway serve` pass the same ones).
      nodeFlags: process.execArgv,
    },
    'gateway listening',
  );
  if (demo) printDemoKey(demo, url);

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // A second signal means "now": skip waiting for in-flight requests.
      process.exit(130);
    }
    stopping = true;
    logger.info({ signal }, 'gateway stopping');
    // Long streams may not finish on their own; after the drain period they are cut.
    setTimeout(() => runtime.app.server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
    runtime.close().then(
      () => process.exit(0),
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

function printDemoKey(demo: DemoAccount, url: string): void {
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
      rule,
      '',
    ].join('\n'),
  );
}
