/**
 * Managing the dashboard's users (docs/dashboard.md): adding and removing them, invitations, and the
 * single-use links that let a user set a password. Shared by the admin API, the `gateway users`
 * command and the dashboard, each with its own Auditor. A link carries a random 256-bit token;
 * only its SHA-256 is stored, so the database never holds a usable link.
 */
import { createHash } from 'node:crypto';
import { errors } from '../core/errors.ts';
import { randomToken } from '../core/ids.ts';
import { normalEmail } from '../storage/people-rows.ts';
import type { Page, PageRequest, User, UserRole, UserToken, UserTokenPurpose } from '../storage/people.ts';
import type { OwnerRef, Store } from '../storage/store.ts';
import { changedFields, type Auditor } from './audit.ts';
import { hashPassword, passwordProblem, type PasswordHashing } from './passwords.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
export const LINK_LIFETIME_MS: Readonly<Record<UserTokenPurpose, number>> = {
  invitation: 7 * DAY_MS,
  sign_in: DAY_MS,
  password_reset: 60 * 60 * 1000,
};

/** Where every link leads; the page reads the token and asks for a password. */
export const LINK_PATH = '/dashboard/link';

export interface IssuedLink {
  readonly token: UserToken;
  /** The path with the token, to put after the gateway's origin. Shown once; never stored. */
  readonly path: string;
}

export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What a user looks like in the admin API, the CLI and the audit log: never the password hash. */
export function userView(user: User) {
  return {
    id: user.id,
    object: 'user' as const,
    email: user.email,
    display_name: user.displayName,
    role: user.role.kind,
    account_id: user.role.kind === 'member' && user.role.owner.kind === 'account' ? user.role.owner.id : null,
    organization_id: user.role.kind === 'member' && user.role.owner.kind === 'organization' ? user.role.owner.id : null,
    status: user.status,
    has_password: user.passwordHash !== null,
    created_at: Math.floor(user.createdAt / 1000),
    last_sign_in_at: user.lastSignInAt === null ? null : Math.floor(user.lastSignInAt / 1000),
  };
}

export function invitationView(token: UserToken) {
  return {
    id: token.id,
    object: 'invitation' as const,
    email: token.email,
    role: token.role?.kind ?? null,
    account_id: token.role?.kind === 'member' && token.role.owner.kind === 'account' ? token.role.owner.id : null,
    organization_id: token.role?.kind === 'member' && token.role.owner.kind === 'organization' ? token.role.owner.id : null,
    created_by: token.createdBy,
    created_at: Math.floor(token.createdAt / 1000),
    expires_at: Math.floor(token.expiresAt / 1000),
  };
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function checkEmail(email: string): string {
  const normal = normalEmail(email);
  if (!EMAIL.test(normal) || normal.length > 254) throw errors.invalidValue('email', `'${email}' is not an email address.`);
  return normal;
}

export function checkPassword(password: string): string {
  const problem = passwordProblem(password);
  if (problem) throw errors.invalidValue('password', problem);
  return password;
}

export interface UserOperationsOptions {
  readonly store: Store;
  readonly audit: Auditor;
  /** Who is acting, as the invitations they make name them. */
  readonly actorLabel: string;
  readonly now: () => number;
  /** The cost of new password hashes. */
  readonly hashing: PasswordHashing;
}

export type UserOperations = ReturnType<typeof createUserOperations>;

export function createUserOperations({ store, audit, actorLabel, now, hashing }: UserOperationsOptions) {
  async function checkRole(role: UserRole): Promise<UserRole> {
    if (role.kind === 'operator') return role;
    const exists = role.owner.kind === 'account' ? await store.getAccount(role.owner.id) : await store.getOrganization(role.owner.id);
    if (!exists) throw errors.notFound(role.owner.kind === 'account' ? 'Account' : 'Organization', role.owner.id);
    return role;
  }

  async function requireUser(id: string): Promise<User> {
    const user = await store.getUser(id);
    if (!user) throw errors.notFound('User', id);
    return user;
  }

  async function issueLink(purpose: UserTokenPurpose, email: string, userId: string | null, role: UserRole | null): Promise<IssuedLink> {
    const plaintext = randomToken(32);
    const at = now();
    const token = await store.createUserToken(
      { hash: tokenHash(plaintext), purpose, userId, email, role, createdBy: actorLabel, expiresAt: at + LINK_LIFETIME_MS[purpose] },
      at,
    );
    return { token, path: `${LINK_PATH}?token=${plaintext}` };
  }

  return {
    /**
     * Adds a user. Without a password, the answer carries a single-use sign-in link (valid a day) with
     * which the user sets one; there is never a default password.
     */
    async addUser(input: {
      email: string;
      displayName?: string | null;
      role: UserRole;
      password?: string;
      /** false: no link (a user who signs in through single sign-on). */
      signInLink?: boolean;
    }): Promise<{ user: User; link: IssuedLink | null }> {
      const email = checkEmail(input.email);
      const role = await checkRole(input.role);
      const passwordHash = input.password === undefined ? null : await hashPassword(checkPassword(input.password), hashing);
      const user = await store.createUser({ email, displayName: input.displayName ?? null, role, passwordHash });
      if (!user) throw errors.invalidValue('email', `A user with the email '${email}' exists already.`);
      await audit('user.create', { kind: 'user', id: user.id }, changedFields(null, userView(user)));
      const link = passwordHash === null && input.signInLink !== false ? await issueLink('sign_in', email, user.id, null) : null;
      return { user, link };
    },
    getUser: requireUser,
    listUsers: (filter: { owner?: OwnerRef }, page: PageRequest): Promise<Page<User>> => store.listUsers(filter, page),
    async removeUser(id: string): Promise<User> {
      const removed = await store.deleteUser(id);
      if (!removed) throw errors.notFound('User', id);
      await audit('user.remove', { kind: 'user', id }, changedFields(userView(removed), null));
      return removed;
    },
    /** A single-use link (valid an hour) with which the user sets a new password; the old one works until then. */
    async passwordResetLink(id: string): Promise<IssuedLink> {
      const user = await requireUser(id);
      const link = await issueLink('password_reset', user.email, user.id, null);
      await audit('user.password_reset_link', { kind: 'user', id }, null);
      return link;
    },
    /** An invitation (valid 7 days); the invitee picks a password with its link and becomes a user of `role`. */
    async invite(input: { email: string; role: UserRole }): Promise<IssuedLink> {
      const email = checkEmail(input.email);
      const role = await checkRole(input.role);
      if (await store.getUserByEmail(email)) throw errors.invalidValue('email', `A user with the email '${email}' exists already.`);
      const link = await issueLink('invitation', email, null, role);
      await audit('invitation.create', { kind: 'invitation', id: link.token.id }, changedFields(null, invitationView(link.token)));
      return link;
    },
    listInvitations: (page: PageRequest): Promise<Page<UserToken>> => store.listInvitations(now(), page),
    async revokeInvitation(id: string): Promise<UserToken> {
      const revoked = await store.revokeUserToken(id, now());
      if (revoked?.purpose !== 'invitation') throw errors.notFound('Invitation', id);
      await audit('invitation.revoke', { kind: 'invitation', id }, null);
      return revoked;
    },
  };
}
