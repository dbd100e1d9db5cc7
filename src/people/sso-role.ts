/**
 * Who a single sign-on user is allowed to be (docs/dashboard.md, "Single sign-on"): their email's
 * domain must be allowed, and the first role rule that matches their domain and claims gives a new
 * user's role. Pure: the provider's claims in, a decision out.
 */
import type { SsoConfig, SsoRoleRule } from '../config/schema.ts';
import type { UserRole } from '../storage/people.ts';

export type SsoDecision =
  | { readonly allowed: true; readonly email: string; readonly role: UserRole | null }
  | { readonly allowed: false; readonly reason: string };

function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}

function claimHolds(claims: Readonly<Record<string, unknown>>, rule: SsoRoleRule): boolean {
  if (rule.claim === undefined) return true;
  const value = claims[rule.claim];
  if (rule.value === undefined) return value === true || (typeof value === 'string' && value !== '');
  return Array.isArray(value) ? value.includes(rule.value) : value === rule.value;
}

function roleOf(rule: SsoRoleRule): UserRole {
  if (rule.role === 'operator') return { kind: 'operator' };
  if (rule.account_id) return { kind: 'member', owner: { kind: 'account', id: rule.account_id } };
  return { kind: 'member', owner: { kind: 'organization', id: rule.organization_id! } };
}

/** Rules a config may hold: a member rule names exactly one owner, an operator rule none. */
export function ssoRuleProblem(rule: SsoRoleRule): string | null {
  const owners = [rule.account_id, rule.organization_id].filter((owner) => owner !== undefined).length;
  if (rule.role === 'member' && owners !== 1) return 'a member rule names exactly one of account_id and organization_id';
  if (rule.role === 'operator' && owners !== 0) return 'an operator rule names no account or organization';
  return null;
}

/** The decision for a provider's ID token claims. `role` is null when no rule matches (an existing user keeps theirs). */
export function decideSso(config: SsoConfig, claims: Readonly<Record<string, unknown>>): SsoDecision {
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
  if (!email.includes('@')) return { allowed: false, reason: 'The provider gave no email address.' };
  if (claims.email_verified === false) return { allowed: false, reason: 'The provider has not verified this email address.' };
  const domain = domainOf(email);
  if (!config.allowed_domains.some((allowed) => allowed.toLowerCase() === domain)) {
    return { allowed: false, reason: `Sign-in with an email of ${domain} is not allowed here.` };
  }
  const rule = config.roles.find((candidate) => (candidate.domain === undefined || candidate.domain.toLowerCase() === domain) && claimHolds(claims, candidate));
  return { allowed: true, email, role: rule ? roleOf(rule) : null };
}
