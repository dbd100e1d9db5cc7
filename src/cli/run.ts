/**
 * The `gateway` command: finds the subcommand, parses its flags, opens the store the same way the
 * server does (DATABASE_URL, GATEWAY_DATA_DIR, GATEWAY_CONFIG) and reports errors as one line.
 * Exit codes: 0 success, 1 the operation failed, 2 the command line was wrong.
 */
import { createAdminOperations, type AdminOperations } from '../admin/operations.ts';
import { buildCatalog } from '../catalog/catalog.ts';
import type { Catalog } from '../catalog/types.ts';
import { ConfigError, loadServedConfig } from '../config/load.ts';
import { GatewayError } from '../core/errors.ts';
import { configErrorLine } from '../server/config-error.ts';
import { readSettings, SettingsError, type Settings } from '../server/settings.ts';
import { openStore } from '../storage/open-store.ts';
import type { Store } from '../storage/store.ts';
import type { WebhookUrlPolicy } from '../webhooks/addresses.ts';
import { webhookSettings } from '../webhooks/settings.ts';
import { UsageError, type Command } from './command.ts';
import { parseCommandLine } from './command-line.ts';
import { accountCommands, organizationCommands } from './commands/accounts.ts';
import { ownerCommands } from './commands/credit.ts';
import { keyCommands } from './commands/keys.ts';
import { serveCommand } from './commands/serve.ts';
import { endpointsCommand } from './commands/endpoints.ts';
import { webhookCommands } from './commands/webhooks.ts';
import { createOutput } from './output.ts';
import { cliAuditContext, createAuditor } from '../people/audit.ts';
import { DEFAULT_PASSWORD_HASHING } from '../people/passwords.ts';
import { createUserOperations } from '../people/users.ts';
import { auditCommands } from './commands/audit.ts';
import { userCommands } from './commands/users.ts';
import { locateDatabase } from './database-location.ts';

export const COMMANDS: readonly Command[] = [
  serveCommand,
  ...accountCommands,
  ...organizationCommands,
  ...keyCommands,
  ...ownerCommands,
  ...webhookCommands,
  ...userCommands,
  ...auditCommands,
  endpointsCommand,
];

export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** Runs one command line; resolves to the exit code, or undefined while a server keeps running. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number | undefined> {
  const command = findCommand(argv);
  const wantsHelp = argv.includes('--help') || argv.includes('-h') || argv[0] === 'help';
  if (!command) {
    if (argv.length === 0 || wantsHelp) {
      io.stdout(generalHelp(argv.filter((word) => word !== 'help' && !word.startsWith('-'))));
      return 0;
    }
    const words = argv.filter((word) => !word.startsWith('-'));
    const misplaced = findCommand(words);
    if (misplaced) {
      // `gateway --json accounts list`: the command is there, its options came before it.
      const options = argv.filter((word) => word.startsWith('-'));
      io.stderr(`gateway: options go after the command: gateway ${[...words, ...options].join(' ')}\n`);
      return 2;
    }
    io.stderr(`gateway: unknown command '${argv.slice(0, 2).join(' ')}'\n\n${generalHelp([])}`);
    return 2;
  }
  if (wantsHelp) {
    io.stdout(commandHelp(command));
    return 0;
  }

  let store: Store | undefined;
  try {
    const parsed = parseCommandLine(argv.slice(command.name.split(' ').length), { ...command.options, json: { type: 'boolean' } }, command.positionals ?? 0);
    const output = createOutput(parsed.values.json === true, io.stdout);
    let opened: { store: Store; settings: Settings } | undefined;
    const open = async () => {
      if (!opened) {
        const settings = locateDatabase(readSettings(io.env), io.env);
        store = await openStore(settings);
        opened = { store, settings };
      }
      return opened;
    };
    let operations: AdminOperations | undefined;
    const code = await command.run(parsed, {
      output,
      env: io.env,
      now: Date.now,
      async operations() {
        if (!operations) {
          const { store: opens, settings } = await open();
          operations = createAdminOperations({
            store: opens,
            catalog: await servedCatalog(opens, settings.configPath),
            webhookPolicy: () => webhookPolicy(settings.configPath),
            audit: createAuditor(opens, cliAuditContext(), Date.now),
          });
        }
        return operations;
      },
      async users() {
        const { store: opens } = await open();
        const context = cliAuditContext();
        // No command sets a password (a user gets a link), so the config file's hashing is not read.
        return createUserOperations({
          store: opens,
          audit: createAuditor(opens, context, Date.now),
          actorLabel: context.actor.label,
          now: Date.now,
          hashing: DEFAULT_PASSWORD_HASHING,
        });
      },
      async store() {
        return (await open()).store;
      },
    });
    return code ?? (command === serveCommand ? undefined : 0);
  } catch (error) {
    return report(error, command, io);
  } finally {
    await store?.close();
  }
}

/**
 * Model names resolve as on the server: against the names it recorded at its last start (the
 * command's own environment may name another config, or none). Before any server has started on
 * the database, against GATEWAY_CONFIG when set; the demo catalog would be a guess.
 */
async function servedCatalog(store: Store, configPath: string | undefined): Promise<Pick<Catalog, 'resolve'>> {
  const served = await store.servedModels();
  if (served.size > 0) return { resolve: (name) => served.get(name) };
  if (configPath !== undefined) return buildCatalog(loadServedConfig(configPath).config);
  return {
    resolve() {
      // Not a GatewayError: no HTTP request is involved. Reported as a failed operation (exit code 1).
      throw new Error('no server has started on this database yet, so its model names are unknown: start it once, or set GATEWAY_CONFIG to its config file');
    },
  };
}

/**
 * Which webhook URLs may be registered: the server's rule, read from GATEWAY_CONFIG when set
 * (`webhooks.allow_private_addresses`); without it, public addresses only, the default. Read only
 * by `webhooks add`, so that no other command depends on the config file.
 */
function webhookPolicy(configPath: string | undefined): WebhookUrlPolicy {
  const config = configPath === undefined ? {} : loadServedConfig(configPath).config;
  return { allowPrivateAddresses: webhookSettings(config).allowPrivateAddresses };
}

/** The command whose words start the command line (`accounts create …`). */
function findCommand(argv: readonly string[]): Command | undefined {
  return COMMANDS.find((command) => command.name === argv.slice(0, command.name.split(' ').length).join(' '));
}

function report(error: unknown, command: Command, io: CliIo): number {
  if (error instanceof UsageError || (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
    io.stderr(`gateway ${command.name}: ${(error as Error).message}\n\n${commandHelp(command)}`);
    return 2;
  }
  if (error instanceof GatewayError) {
    io.stderr(`gateway ${command.name}: ${error.message}\n`);
    return 1;
  }
  if (error instanceof ConfigError) {
    io.stderr(`${configErrorLine(error)}\n`);
    return 1;
  }
  if (error instanceof SettingsError) {
    io.stderr(`settings error: ${error.message}\n`);
    return 1;
  }
  io.stderr(`gateway ${command.name}: ${(error as Error).message ?? String(error)}\n`);
  return 1;
}

function commandHelp(command: Command): string {
  return `Usage: gateway ${command.name} ${command.usage}${command.usage ? ' ' : ''}[--json]\n\n${command.summary}.\n`;
}

function generalHelp(topic: readonly string[]): string {
  const shown = topic.length > 0 ? COMMANDS.filter((command) => command.name.startsWith(topic[0])) : COMMANDS;
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  return [
    'Usage: gateway <command> [options] [--json]',
    '',
    'Commands:',
    ...(shown.length > 0 ? shown : COMMANDS).map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'Every command except serve acts on the database directly, selected like the server:',
    '  DATABASE_URL (postgres://…; unset = SQLite under GATEWAY_DATA_DIR, default ./data)',
    "  Model names (--allowed-models) are checked against the server's catalog, recorded at its start;",
    '  before the first start, against GATEWAY_CONFIG.',
    '  Webhook URLs must be on public addresses unless GATEWAY_CONFIG sets webhooks.allow_private_addresses.',
    '',
    "Run 'gateway <command> --help' for a command's options.",
    '',
  ].join('\n');
}
