/** `gateway accounts create|list|show|update` and `gateway orgs …`: the two kinds of owner. */
import type { AdminOperations, OwnerInput } from '../../admin/operations.ts';
import { keyLimits, LIMIT_OPTIONS, LIMIT_USAGE } from './keys.ts';
import { accountView, organizationView } from '../../admin/views.ts';
import type { Account, Balance, Organization, OwnerPatch, OwnerRef } from '../../storage/store.ts';
import { CONSENT_OPTIONS, flagConsent, flagRate, requiredText, text, type Command, type CommandContext, type ParsedCommand } from '../command.ts';

const OWNER_COLUMNS = ['id', 'name', 'community_supply', 'training_use', 'rate', 'created_at'];
const UPDATE_OPTIONS = { name: { type: 'string' }, ...CONSENT_OPTIONS, rate: { type: 'string' } } as const;

type Identified = { readonly id: string };

/** What tells the two kinds of owner apart on the command line; `show` and `update` are otherwise one command. */
interface OwnerKind<Owner extends Identified> {
  readonly kind: OwnerRef['kind'];
  /** The command group: `gateway <group> show`. */
  readonly group: string;
  view(owner: Owner, balance: Balance): Record<string, unknown>;
}

const ACCOUNT: OwnerKind<Account> = { kind: 'account', group: 'accounts', view: accountView };
const ORGANIZATION: OwnerKind<Organization> = { kind: 'organization', group: 'orgs', view: organizationView };

/** What `create` takes for either kind: the name, and the consent and rate when given. */
function ownerInput(command: ParsedCommand): OwnerInput {
  return { name: requiredText(command, 'name', 0), consent: flagConsent(command), rate: flagRate(command) ?? null };
}

/** A command that names one owner prints it with its balance. */
async function printOwner<Owner extends Identified>(context: CommandContext, operations: AdminOperations, kind: OwnerKind<Owner>, owner: Owner): Promise<void> {
  context.output.record(kind.view(owner, await operations.getBalance({ kind: kind.kind, id: owner.id })));
}

function showCommand<Owner extends Identified>(kind: OwnerKind<Owner>, get: (operations: AdminOperations, id: string) => Promise<Owner>): Command {
  return {
    name: `${kind.group} show`,
    summary: `Show an ${kind.kind} and its balance`,
    usage: `<${kind.kind}-id>`,
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      await printOwner(context, operations, kind, await get(operations, requiredText(command, 'id', 0)));
    },
  };
}

function updateCommand<Owner extends Identified>(
  kind: OwnerKind<Owner>,
  update: (operations: AdminOperations, id: string, patch: OwnerPatch) => Promise<Owner>,
): Command {
  return {
    name: `${kind.group} update`,
    summary: `Rename an ${kind.kind} or change its consent or rate ('--rate default' resets it)`,
    usage: `<${kind.kind}-id> [--name N] [--community-supply true|false] [--training-use true|false] [--rate R|default]`,
    options: UPDATE_OPTIONS,
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const patch = { name: text(command, 'name'), ...flagConsent(command), rate: flagRate(command) };
      await printOwner(context, operations, kind, await update(operations, requiredText(command, 'id', 0), patch));
    },
  };
}

export const accountCommands: readonly Command[] = [
  {
    name: 'accounts create',
    summary: 'Create an account',
    usage: '<name> [--organization ID] [--community-supply true|false] [--training-use true|false] [--rate R]',
    options: { name: { type: 'string' }, organization: { type: 'string' }, ...CONSENT_OPTIONS, rate: { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const account = await operations.createAccount({ ...ownerInput(command), organizationId: text(command, 'organization') ?? null });
      await printOwner(context, operations, ACCOUNT, account);
    },
  },
  {
    name: 'accounts list',
    summary: 'List accounts',
    usage: '',
    async run(_command, context) {
      const accounts = await (await context.operations()).listAccounts();
      context.output.list(
        accounts.map((account) => accountView(account)),
        ['id', 'name', 'organization_id', ...OWNER_COLUMNS.slice(2)],
      );
    },
  },
  showCommand(ACCOUNT, (operations, id) => operations.getAccount(id)),
  updateCommand(ACCOUNT, (operations, id, patch) => operations.updateAccount(id, patch)),
];

export const organizationCommands: readonly Command[] = [
  {
    name: 'orgs create',
    summary: 'Create an organization (its keys spend its credit and follow its consent)',
    usage: '<name> [--community-supply true|false] [--training-use true|false] [--rate R]',
    options: { name: { type: 'string' }, ...CONSENT_OPTIONS, rate: { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      await printOwner(context, operations, ORGANIZATION, await operations.createOrganization(ownerInput(command)));
    },
  },
  {
    name: 'orgs list',
    summary: 'List organizations',
    usage: '',
    async run(_command, context) {
      const organizations = await (await context.operations()).listOrganizations();
      context.output.list(
        organizations.map((organization) => organizationView(organization)),
        OWNER_COLUMNS,
      );
    },
  },
  showCommand(ORGANIZATION, (operations, id) => operations.getOrganization(id)),
  updateCommand(ORGANIZATION, (operations, id, patch) => operations.updateOrganization(id, patch)),
  {
    name: 'orgs set-limits',
    summary: "Replace the limits over all of an organization's keys (none given: no limits)",
    usage: `<org-id> ${LIMIT_USAGE}`,
    options: LIMIT_OPTIONS,
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const organization = await operations.setOrganizationLimits(requiredText(command, 'id', 0), keyLimits(command));
      await printOwner(context, operations, ORGANIZATION, organization);
    },
  },
];
