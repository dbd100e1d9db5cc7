/** `gateway keys create|list|set-limits|revoke`. */
import { keyView } from '../../admin/views.ts';
import type { KeyLimits } from '../../storage/store.ts';
import { flagList, flagOwner, OWNER_OPTIONS, requiredText, text, UsageError, type Command, type ParsedCommand } from '../command.ts';

/** The flags of the limits a key or an organization takes (docs/limits.md). */
export const LIMIT_USAGE =
  '[--requests-per-minute N] [--tokens-per-minute N] [--concurrent-requests N] [--spend-per-day-usd USD] [--spend-per-month-usd USD] [--spend-limit-usd USD]';
export const LIMIT_OPTIONS = {
  'requests-per-minute': { type: 'string' },
  'tokens-per-minute': { type: 'string' },
  'concurrent-requests': { type: 'string' },
  'spend-per-day-usd': { type: 'string' },
  'spend-per-month-usd': { type: 'string' },
  'spend-limit-usd': { type: 'string' },
} as const;

export const keyCommands: readonly Command[] = [
  {
    name: 'keys create',
    summary: 'Create an API key (the key is printed once)',
    usage: `--account ID | --organization ID [--name N] [--scopes chat,models:read,…] [--allowed-models M1,M2,…] ${LIMIT_USAGE}`,
    options: {
      ...OWNER_OPTIONS,
      name: { type: 'string' },
      scopes: { type: 'string' },
      'allowed-models': { type: 'string' },
      ...LIMIT_OPTIONS,
    },
    async run(command, context) {
      const operations = await context.operations();
      const issued = await operations.createKey({
        owner: flagOwner(command, true),
        name: text(command, 'name') ?? null,
        scopes: flagList(command, 'scopes') ?? null,
        allowedModels: flagList(command, 'allowed-models') ?? null,
        limits: keyLimits(command),
      });
      context.output.record(keyView(issued.record, issued.plaintext));
      context.output.note('\nThe key is shown only this once; store it now.');
    },
  },
  {
    name: 'keys list',
    summary: 'List API keys (of one owner, or all)',
    usage: '[--account ID | --organization ID]',
    options: OWNER_OPTIONS,
    async run(command, context) {
      const keys = await (await context.operations()).listKeys(flagOwner(command, false));
      context.output.list(
        keys.map((key) => keyView(key)),
        ['id', 'account_id', 'organization_id', 'name', 'display_prefix', 'scopes', 'allowed_models', 'revoked_at'],
      );
    },
  },
  {
    name: 'keys set-limits',
    summary: 'Replace the limits of an API key (none given: no limits); effective on running servers within a second',
    usage: `<key-id> ${LIMIT_USAGE}`,
    options: LIMIT_OPTIONS,
    positionals: 1,
    async run(command, context) {
      const key = await (await context.operations()).setKeyLimits(requiredText(command, 'id', 0), keyLimits(command));
      context.output.record(keyView(key));
    },
  },
  {
    name: 'keys revoke',
    summary: 'Revoke an API key (effective on running servers within a second)',
    usage: '<key-id>',
    positionals: 1,
    async run(command, context) {
      const key = await (await context.operations()).revokeKey(requiredText(command, 'id', 0), context.now());
      context.output.record(keyView(key));
    },
  },
];

/** The integer limits a key takes, by flag. */
const COUNT_FLAGS = [
  ['requests-per-minute', 'requests_per_minute'],
  ['concurrent-requests', 'concurrent_requests'],
  ['tokens-per-minute', 'tokens_per_minute'],
] as const;

/** The USD limits a key takes, by flag (the operation checks the amounts). */
const USD_FLAGS = [
  ['spend-per-day-usd', 'spend_per_day_usd'],
  ['spend-per-month-usd', 'spend_per_month_usd'],
  ['spend-limit-usd', 'spend_limit_usd'],
] as const;

export function keyLimits(command: ParsedCommand): KeyLimits | null {
  const limits: { -readonly [Field in keyof KeyLimits]: KeyLimits[Field] } = {};
  for (const [flag, field] of COUNT_FLAGS) {
    const value = text(command, flag);
    if (value === undefined) continue;
    if (!/^[1-9]\d{0,8}$/.test(value)) throw new UsageError(`--${flag} takes a positive integer`);
    limits[field] = Number(value);
  }
  for (const [flag, field] of USD_FLAGS) {
    const value = text(command, flag);
    if (value !== undefined) limits[field] = value;
  }
  return Object.keys(limits).length === 0 ? null : limits;
}
