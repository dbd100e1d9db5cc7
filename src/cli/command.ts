/**
 * The shape of one `gateway` subcommand and the helpers its flags share. Flags are parsed with
 * node:util parseArgs (strict: an unknown flag is a usage error, never ignored).
 */
import type { ParseArgsOptionsConfig } from 'node:util';
import type { AdminOperations } from '../admin/operations.ts';
import { parseRate } from '../admin/parse.ts';
import type { RateMultiplier } from '../core/money.ts';
import type { OwnerRef, Store } from '../storage/store.ts';
import type { UserOperations } from '../people/users.ts';
import type { Output } from './output.ts';

export interface ParsedCommand {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

export interface CommandContext {
  readonly output: Output;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Opens the store (and the catalog, for model names) on first use. */
  operations(): Promise<AdminOperations>;
  /** The dashboard's users, acting as this command (audited so). */
  users(): Promise<UserOperations>;
  /** The store itself, for what reads it directly (`audit verify`). */
  store(): Promise<Store>;
  readonly now: () => number;
}

export interface Command {
  /** `accounts create` */
  readonly name: string;
  readonly summary: string;
  /** Arguments after the name, for help: `<name> [--organization ID]`. */
  readonly usage: string;
  readonly options?: ParseArgsOptionsConfig;
  /** How many positional arguments it takes at most. */
  readonly positionals?: number;
  /**
   * Returns an exit code when it is not 0 (serve returns when the server stops). Not `void`: a
   * value passed through by accident (a stream's write() returns true) would become the exit code.
   */
  run(command: ParsedCommand, context: CommandContext): Promise<number | undefined>;
}

/** A mistake in the command line: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function text(command: ParsedCommand, flag: string): string | undefined {
  const value = command.values[flag];
  return typeof value === 'string' ? value : undefined;
}

export function requiredText(command: ParsedCommand, flag: string, positionalIndex?: number): string {
  const value = text(command, flag) ?? (positionalIndex === undefined ? undefined : command.positionals[positionalIndex]);
  if (value === undefined || value === '') throw new UsageError(`missing ${positionalIndex === undefined ? `--${flag}` : `<${flag}>`}`);
  return value;
}

/** `true`/`false` (also yes/no, on/off); undefined when the flag is absent. */
export function flagBoolean(command: ParsedCommand, flag: string): boolean | undefined {
  const value = text(command, flag);
  if (value === undefined) return undefined;
  if (/^(true|yes|on|1)$/i.test(value)) return true;
  if (/^(false|no|off|0)$/i.test(value)) return false;
  throw new UsageError(`--${flag} takes true or false, got '${value}'`);
}

/** `--rate 1.15`, or `--rate default` to fall back to the configured default. */
export function flagRate(command: ParsedCommand): RateMultiplier | null | undefined {
  const value = text(command, 'rate');
  if (value === undefined) return undefined;
  return value === 'default' ? null : parseRate(value, 'rate');
}

/** Comma-separated values (`--scopes chat,models:read`). */
export function flagList(command: ParsedCommand, flag: string): string[] | undefined {
  const value = text(command, flag);
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export const OWNER_OPTIONS = {
  account: { type: 'string' },
  organization: { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

export function flagOwner(command: ParsedCommand, required: true): OwnerRef;
export function flagOwner(command: ParsedCommand, required: false): OwnerRef | undefined;
export function flagOwner(command: ParsedCommand, required: boolean): OwnerRef | undefined {
  const account = text(command, 'account');
  const organization = text(command, 'organization');
  if (account !== undefined && organization !== undefined) throw new UsageError('give --account or --organization, not both');
  if (account !== undefined) return { kind: 'account', id: account };
  if (organization !== undefined) return { kind: 'organization', id: organization };
  if (required) throw new UsageError('missing --account or --organization');
  return undefined;
}

export const CONSENT_OPTIONS = {
  'community-supply': { type: 'string' },
  'training-use': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

export function flagConsent(command: ParsedCommand) {
  return { communitySupply: flagBoolean(command, 'community-supply'), trainingUse: flagBoolean(command, 'training-use') };
}
