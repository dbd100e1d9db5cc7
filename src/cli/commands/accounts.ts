/** `gateway accounts create|list|show|update` and `gateway orgs …`: the two kinds of owner. */
import { accountView, organizationView } from '../../admin/views.ts';
import { CONSENT_OPTIONS, flagConsent, flagRate, requiredText, text, type Command } from '../command.ts';

const OWNER_COLUMNS = ['id', 'name', 'community_supply', 'training_use', 'rate', 'created_at'];
const UPDATE_OPTIONS = { name: { type: 'string' }, ...CONSENT_OPTIONS, rate: { type: 'string' } } as const;

export const accountCommands: readonly Command[] = [
  {
    name: 'accounts create',
    summary: 'Create an account',
    usage: '<name> [--organization ID] [--community-supply true|false] [--training-use true|false] [--rate R]',
    options: { name: { type: 'string' }, organization: { type: 'string' }, ...CONSENT_OPTIONS, rate: { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const account = await operations.createAccount({
        name: requiredText(command, 'name', 0),
        organizationId: text(command, 'organization') ?? null,
        consent: flagConsent(command),
        rate: flagRate(command) ?? null,
      });
      context.output.record(accountView(account, await operations.getBalance({ kind: 'account', id: account.id })));
    },
  },
  {
    name: 'accounts list',
    summary: 'List accounts',
    usage: '',
    async run(_command, context) {
      const accounts = await (await context.operations()).listAccounts();
      context.output.list(accounts.map((account) => accountView(account)), ['id', 'name', 'organization_id', ...OWNER_COLUMNS.slice(2)]);
    },
  },
  {
    name: 'accounts show',
    summary: 'Show an account and its balance',
    usage: '<account-id>',
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const account = await operations.getAccount(requiredText(command, 'id', 0));
      context.output.record(accountView(account, await operations.getBalance({ kind: 'account', id: account.id })));
    },
  },
  {
    name: 'accounts update',
    summary: "Rename an account or change its consent or rate ('--rate default' resets it)",
    usage: '<account-id> [--name N] [--community-supply true|false] [--training-use true|false] [--rate R|default]',
    options: UPDATE_OPTIONS,
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const id = requiredText(command, 'id', 0);
      const account = await operations.updateAccount(id, { name: text(command, 'name'), ...flagConsent(command), rate: flagRate(command) });
      context.output.record(accountView(account, await operations.getBalance({ kind: 'account', id })));
    },
  },
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
      const organization = await operations.createOrganization({
        name: requiredText(command, 'name', 0),
        consent: flagConsent(command),
        rate: flagRate(command) ?? null,
      });
      context.output.record(organizationView(organization, await operations.getBalance({ kind: 'organization', id: organization.id })));
    },
  },
  {
    name: 'orgs list',
    summary: 'List organizations',
    usage: '',
    async run(_command, context) {
      const organizations = await (await context.operations()).listOrganizations();
      context.output.list(organizations.map((organization) => organizationView(organization)), OWNER_COLUMNS);
    },
  },
  {
    name: 'orgs show',
    summary: 'Show an organization and its balance',
    usage: '<organization-id>',
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const organization = await operations.getOrganization(requiredText(command, 'id', 0));
      context.output.record(organizationView(organization, await operations.getBalance({ kind: 'organization', id: organization.id })));
    },
  },
  {
    name: 'orgs update',
    summary: "Rename an organization or change its consent or rate ('--rate default' resets it)",
    usage: '<organization-id> [--name N] [--community-supply true|false] [--training-use true|false] [--rate R|default]',
    options: UPDATE_OPTIONS,
    positionals: 1,
    async run(command, context) {
      const operations = await context.operations();
      const id = requiredText(command, 'id', 0);
      const organization = await operations.updateOrganization(id, { name: text(command, 'name'), ...flagConsent(command), rate: flagRate(command) });
      context.output.record(organizationView(organization, await operations.getBalance({ kind: 'organization', id })));
    },
  },
];
