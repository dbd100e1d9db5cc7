/** `gateway users add|list|remove|reset-password|invite`: the dashboard's people (docs/dashboard.md). */
import { invitationView, userView, type IssuedLink } from '../../people/users.ts';
import { readSettings } from '../../server/settings.ts';
import type { UserRole } from '../../storage/people.ts';
import { flagOwner, OWNER_OPTIONS, requiredText, text, UsageError, type CommandContext, type ParsedCommand, type Command } from '../command.ts';

/** Links point at the gateway the operator reaches: GATEWAY_PUBLIC_URL, else this machine's port. */
function linkUrl(context: CommandContext, link: IssuedLink): string {
  const settings = readSettings(context.env);
  const origin = settings.publicUrl ?? `http://127.0.0.1:${settings.port}`;
  return `${origin.replace(/\/$/, '')}${link.path}`;
}

function roleOf(command: ParsedCommand): UserRole {
  const owner = flagOwner(command, false);
  if (command.values.operator === true) {
    if (owner) throw new UsageError('an operator belongs to no account or organization: give --operator or an owner, not both');
    return { kind: 'operator' };
  }
  if (!owner) throw new UsageError('give --operator, or --account ID or --organization ID for a member');
  return { kind: 'member', owner };
}

const ROLE_OPTIONS = { ...OWNER_OPTIONS, operator: { type: 'boolean' } } as const;

export const userCommands: readonly Command[] = [
  {
    name: 'users add',
    summary: 'Add a dashboard user; prints a one-time sign-in link with which they set their password',
    usage: '<email> --operator | --account ID | --organization ID [--name NAME]',
    options: { ...ROLE_OPTIONS, email: { type: 'string' }, name: { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const { user, link } = await (await context.users()).addUser({
        email: requiredText(command, 'email', 0),
        displayName: text(command, 'name') ?? null,
        role: roleOf(command),
      });
      context.output.record({
        ...userView(user),
        ...(link ? { sign_in_link: linkUrl(context, link), link_expires_at: Math.floor(link.token.expiresAt / 1000) } : {}),
      });
      context.output.note('\nThe link works once, for a day: open it to set a password and sign in.');
    },
  },
  {
    name: 'users list',
    summary: 'List dashboard users (all, or the members of one account or organization)',
    usage: '[--account ID | --organization ID]',
    options: OWNER_OPTIONS,
    async run(command, context) {
      const users = await context.users();
      const owner = flagOwner(command, false);
      const views = [];
      let after: string | null = null;
      do {
        const page = await users.listUsers(owner ? { owner } : {}, { after, limit: 500 });
        views.push(...page.items.map(userView));
        after = page.next;
      } while (after !== null);
      context.output.list(views, ['id', 'email', 'role', 'account_id', 'organization_id', 'status', 'last_sign_in_at']);
    },
  },
  {
    name: 'users remove',
    summary: 'Remove a dashboard user (their sessions end at once)',
    usage: '<user-id>',
    positionals: 1,
    async run(command, context) {
      context.output.record({ ...userView(await (await context.users()).removeUser(requiredText(command, 'id', 0))), deleted: true });
    },
  },
  {
    name: 'users reset-password',
    summary: 'Print a one-time link (valid an hour) with which a user sets a new password',
    usage: '<user-id>',
    positionals: 1,
    async run(command, context) {
      const link = await (await context.users()).passwordResetLink(requiredText(command, 'id', 0));
      context.output.record({ user_id: link.token.userId, password_reset_link: linkUrl(context, link), expires_at: Math.floor(link.token.expiresAt / 1000) });
    },
  },
  {
    name: 'users invite',
    summary: 'Invite someone by email; prints the invitation link (valid 7 days, once)',
    usage: '<email> --operator | --account ID | --organization ID',
    options: { ...ROLE_OPTIONS, email: { type: 'string' } },
    positionals: 1,
    async run(command, context) {
      const link = await (await context.users()).invite({ email: requiredText(command, 'email', 0), role: roleOf(command) });
      context.output.record({ ...invitationView(link.token), invitation_link: linkUrl(context, link) });
    },
  },
];
