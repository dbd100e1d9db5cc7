/** `gateway credit add`, `gateway consent set`, `gateway usage`: acting on one owner. */
import { parseCreditAmount, parseSince } from '../../admin/parse.ts';
import { accountView, creditView, organizationView, usageView } from '../../admin/views.ts';
import { CONSENT_OPTIONS, flagConsent, flagOwner, OWNER_OPTIONS, requiredText, text, UsageError, type Command } from '../command.ts';

export const ownerCommands: readonly Command[] = [
  {
    name: 'credit add',
    summary: 'Add prepaid credit (USD) to an account or organization',
    usage: '--account ID | --organization ID <amount-usd> [--note TEXT]',
    options: { ...OWNER_OPTIONS, amount: { type: 'string' }, note: { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const owner = flagOwner(command, true);
      const amount = parseCreditAmount(requiredText(command, 'amount', 0), 'amount');
      const { entry, balance } = await (await context.operations()).addCredit(owner, amount, text(command, 'note'));
      context.output.record(creditView(entry, balance));
    },
  },
  {
    name: 'consent set',
    summary: 'Allow or refuse community supply and training use for an account or organization',
    usage: '--account ID | --organization ID [--community-supply true|false] [--training-use true|false]',
    options: { ...OWNER_OPTIONS, ...CONSENT_OPTIONS },
    async run(command, context) {
      const owner = flagOwner(command, true);
      const consent = flagConsent(command);
      if (consent.communitySupply === undefined && consent.trainingUse === undefined) {
        throw new UsageError('give --community-supply and/or --training-use');
      }
      const operations = await context.operations();
      if (owner.kind === 'account') {
        const account = await operations.updateAccount(owner.id, consent);
        context.output.record(accountView(account, await operations.getBalance(owner)));
      } else {
        const organization = await operations.updateOrganization(owner.id, consent);
        context.output.record(organizationView(organization, await operations.getBalance(owner)));
      }
    },
  },
  {
    name: 'usage',
    summary: 'Requests served (with their tokens and cost) and refused, per model, for an account or organization',
    usage: '--account ID | --organization ID [--since EPOCH_SECONDS|YYYY-MM-DD]',
    options: { ...OWNER_OPTIONS, since: { type: 'string' } },
    async run(command, context) {
      const owner = flagOwner(command, true);
      const sinceText = text(command, 'since');
      const since = sinceText === undefined ? 0 : parseSince(sinceText, 'since');
      const view = usageView(owner, since, await (await context.operations()).usage(owner, since));
      if (context.output.json) context.output.record(view);
      else
        context.output.list(
          [...view.data, { model: 'TOTAL', ...view.total }],
          ['model', 'requests', 'refused_requests', 'input_tokens', 'output_tokens', 'cost_usd', 'over_hold_requests', 'over_hold_usd'],
        );
    },
  },
];
