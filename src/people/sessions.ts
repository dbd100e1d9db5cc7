/**
 * Signing in and the sessions that follow (docs/dashboard.md, "Sign-in"; docs/security.md). A session
 * is a random 256-bit cookie value; the store keeps its SHA-256, so a database leak signs no one
 * in. It ends after SESSION_IDLE_MS without a request, and SESSION_ABSOLUTE_MS after sign-in
 * whatever the activity; every sign-in makes a new one (no session fixation). Failed sign-ins are
 * audit rows, and the same rows throttle: too many from one address, or for one email, within
 * THROTTLE_WINDOW_MS refuse further attempts for a while, on every instance alike.
 */
import { errors } from '../core/errors.ts';
import { randomToken } from '../core/ids.ts';
import type { AuditActor, Session, User } from '../storage/people.ts';
import type { Store } from '../storage/store.ts';
import { createAuditor } from './audit.ts';
import { hashPassword, spendVerification, verifyPassword, type PasswordHashing } from './passwords.ts';
import { checkPassword, tokenHash } from './users.ts';

export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** Activity is written at most this often per session: not one write per page view. */
const TOUCH_EVERY_MS = 60 * 1000;

export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;
export const MAX_FAILURES_PER_ADDRESS = 20;
export const MAX_FAILURES_PER_EMAIL = 5;
export const SIGN_IN_FAILED = 'user.sign_in_failed';

export function userActor(user: User): AuditActor {
  return { kind: 'user', id: user.id, label: user.email };
}

export interface SignedIn {
  readonly user: User;
  readonly session: Session;
  /** The cookie's value: shown to the browser only. */
  readonly cookie: string;
}

export type SignInOutcome = { readonly ok: true; readonly signedIn: SignedIn } | { readonly ok: false; readonly reason: 'invalid' | 'throttled' };

export interface Sessions {
  signIn(input: { email: string; password: string; source: string }): Promise<SignInOutcome>;
  /** Starts a session for a user who proved who they are another way (a link, the admin key, SSO). */
  startSession(user: User, source: string, how: string): Promise<SignedIn>;
  /** The live session of a cookie and its (active) user, or null; records activity. */
  resolve(cookie: string): Promise<{ user: User; session: Session } | null>;
  signOut(cookie: string, source: string): Promise<void>;
  signOutEverywhere(user: User, source: string): Promise<number>;
  /**
   * Uses a single-use link: an invitation creates its user, a sign-in or reset link sets the user's
   * password; then every other session of the user ends and a new one starts. Null when the link is
   * unknown, used or expired.
   */
  redeemLink(input: { token: string; password: string; displayName?: string | null; source: string }): Promise<SignedIn | null>;
}

/** `hashing`: the cost of the hashes of passwords set with a link, and of an unknown email's sign-in. */
export function createSessions(store: Store, now: () => number, hashing: PasswordHashing): Sessions {
  const auditAs = (actor: AuditActor, source: string) => createAuditor(store, { actor, source }, now);

  async function startSession(user: User, source: string, how: string): Promise<SignedIn> {
    const cookie = randomToken(32);
    const at = now();
    const session: Session = {
      idHash: tokenHash(cookie),
      userId: user.id,
      csrfToken: randomToken(32),
      createdAt: at,
      lastSeenAt: at,
      expiresAt: at + SESSION_ABSOLUTE_MS,
    };
    await store.createSession(session);
    const updated = (await store.updateUser(user.id, { lastSignInAt: at })) ?? user;
    await auditAs(userActor(user), source)('user.sign_in', { kind: 'user', id: user.id }, { method: { after: how } });
    return { user: updated, session, cookie };
  }

  async function throttled(email: string, source: string): Promise<boolean> {
    const since = now() - THROTTLE_WINDOW_MS;
    const [byAddress, byEmail] = await Promise.all([
      store.countAudit({ action: SIGN_IN_FAILED, source, since }),
      store.countAudit({ action: SIGN_IN_FAILED, targetId: email, since }),
    ]);
    return byAddress >= MAX_FAILURES_PER_ADDRESS || byEmail >= MAX_FAILURES_PER_EMAIL;
  }

  return {
    async signIn({ email, password, source }) {
      const normal = email.trim().toLowerCase();
      const anonymous: AuditActor = { kind: 'anonymous', id: null, label: normal };
      if (await throttled(normal, source)) {
        await auditAs(anonymous, source)('user.sign_in_throttled', { kind: 'email', id: normal }, null);
        return { ok: false, reason: 'throttled' };
      }
      const user = await store.getUserByEmail(normal);
      let valid = false;
      if (user?.passwordHash) valid = await verifyPassword(password, user.passwordHash);
      else await spendVerification(password, hashing);
      if (!user || !valid || user.status !== 'active') {
        await auditAs(anonymous, source)(SIGN_IN_FAILED, { kind: 'email', id: normal }, null);
        return { ok: false, reason: 'invalid' };
      }
      return { ok: true, signedIn: await startSession(user, source, 'password') };
    },
    startSession,
    async resolve(cookie) {
      const session = await store.getSession(tokenHash(cookie));
      if (!session) return null;
      const at = now();
      if (at >= session.expiresAt || at >= session.lastSeenAt + SESSION_IDLE_MS) {
        await store.deleteSession(session.idHash);
        return null;
      }
      const user = await store.getUser(session.userId);
      if (user?.status !== 'active') return null;
      if (at - session.lastSeenAt >= TOUCH_EVERY_MS) await store.touchSession(session.idHash, at);
      return { user, session };
    },
    async signOut(cookie, source) {
      const session = await store.getSession(tokenHash(cookie));
      if (!session) return;
      await store.deleteSession(session.idHash);
      const user = await store.getUser(session.userId);
      if (user) await auditAs(userActor(user), source)('user.sign_out', { kind: 'user', id: user.id }, null);
    },
    async signOutEverywhere(user, source) {
      const ended = await store.deleteUserSessions(user.id);
      await auditAs(userActor(user), source)('user.sign_out_everywhere', { kind: 'user', id: user.id }, { sessions: { after: ended } });
      return ended;
    },
    async redeemLink({ token, password, displayName, source }) {
      checkPassword(password);
      const passwordHash = await hashPassword(password, hashing);
      const used = await store.consumeUserToken(tokenHash(token), ['invitation', 'sign_in', 'password_reset'], now());
      if (!used) return null;
      let user: User | null;
      if (used.purpose === 'invitation') {
        user = await store.createUser({ email: used.email, displayName: displayName ?? null, role: used.role!, passwordHash });
        if (!user) throw errors.invalidValue('email', `A user with the email '${used.email}' exists already.`);
        await auditAs(userActor(user), source)(
          'invitation.accept',
          { kind: 'user', id: user.id },
          {
            email: { after: user.email },
            role: { after: user.role.kind },
            invitation: { after: used.id },
          },
        );
      } else {
        user = await store.updateUser(used.userId!, { passwordHash });
        if (!user) return null;
        await store.deleteUserSessions(user.id);
        await auditAs(userActor(user), source)(
          'user.password_set',
          { kind: 'user', id: user.id },
          { password: { after: 'changed' }, link: { after: used.purpose } },
        );
      }
      return startSession(user, source, used.purpose);
    },
  };
}
