/**
 * What every dashboard request goes through (docs/security.md, "Dashboard sessions and CSRF"):
 * - security headers on every answer: a strict Content-Security-Policy (own scripts and styles
 *   only, no inline code, no framing, forms post only here), X-Frame-Options, no sniffing, no
 *   referrer to other sites (links carry single-use tokens; `no-referrer` would make browsers send
 *   `Origin: null` on the dashboard's own forms), no caching of pages;
 * - the session, from its HttpOnly, SameSite=Lax cookie, scoped to /dashboard, Secure over TLS;
 *   an Authorization header is never read here, so no API key reaches a dashboard page;
 * - CSRF: a POST must come from this origin (Origin, or Sec-Fetch-Site when the browser sends
 *   it) and carry the synchronizer token of its session; a form posted before sign-in carries
 *   the value of a form cookie instead (double submit).
 */
import { timingSafeEqual } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomToken } from '../core/ids.ts';
import type { Sessions } from '../people/sessions.ts';
import { SESSION_ABSOLUTE_MS } from '../people/sessions.ts';
import type { Session, User } from '../storage/people.ts';

export const SESSION_COOKIE = 'gateway_session';
export const FORM_COOKIE = 'gateway_form';
const COOKIE_PATH = '/dashboard';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export function setSecurityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONTENT_SECURITY_POLICY);
  reply.header('x-frame-options', 'DENY');
  reply.header('x-content-type-options', 'nosniff');
  reply.header('referrer-policy', 'same-origin');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=()');
}

export interface Viewer {
  readonly user: User;
  readonly session: Session;
  readonly cookie: string;
}

function cookieOptions(request: FastifyRequest, maxAgeSeconds: number) {
  return { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax' as const, secure: request.protocol === 'https', maxAge: maxAgeSeconds };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, cookie: string): void {
  reply.setCookie(SESSION_COOKIE, cookie, cookieOptions(request, SESSION_ABSOLUTE_MS / 1000));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: COOKIE_PATH, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' });
}

export async function resolveViewer(request: FastifyRequest, sessions: Sessions): Promise<Viewer | null> {
  const cookie = request.cookies[SESSION_COOKIE];
  if (!cookie || cookie.length > 128) return null;
  const found = await sessions.resolve(cookie);
  return found ? { ...found, cookie } : null;
}

/** The form cookie of pages before sign-in: the value their forms echo (made when missing). */
export function formToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[FORM_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomToken(32);
  reply.setCookie(FORM_COOKIE, token, cookieOptions(request, 24 * 60 * 60));
  return token;
}

function sameText(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Whether a state-changing request came from a page of this origin. */
export function sameOrigin(request: FastifyRequest, origin: string): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const from = request.headers.origin;
  return from === undefined || from === origin;
}

/** The CSRF check of a POST: its `_csrf` field against the session's token, or the form cookie's. */
export function csrfValid(request: FastifyRequest, expected: string | undefined, origin: string): boolean {
  const body = request.body as Record<string, unknown> | undefined;
  const sent = typeof body?._csrf === 'string' ? body._csrf : undefined;
  return expected !== undefined && sameOrigin(request, origin) && sameText(sent, expected);
}

/**
 * Where to go after signing in: only a path of the dashboard itself. Anything else (another host,
 * `//host`, a backslash trick, a scheme) goes to the dashboard's home: no open redirect.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string') return '/dashboard';
  if (!/^\/dashboard(?:[/?#]|$)/.test(next) || /[\\\s]/.test(next) || next.includes('//')) return '/dashboard';
  return next;
}
