/**
 * The frame of every dashboard page: landmarks (banner, navigation, main), a skip link, the page
 * title as the one h1, and the navigation of the viewer's role. Forms that change something carry
 * the session's CSRF token (`csrfField`).
 */
import type { User } from '../storage/people.ts';
import { html, type Html } from './html.ts';

export const ASSET_VERSION = '2';

export interface Frame {
  readonly title: string;
  /** The signed-in user, or null on the sign-in pages. */
  readonly user: User | null;
  /** The session's CSRF token (for the sign-out form). */
  readonly csrf: string;
  /** The path of the current page, to mark its navigation link. */
  readonly path: string;
  /** Scripts of this page beside dashboard.js (assets of the gateway's own, such as the chart library). */
  readonly scripts?: readonly string[];
}

function navigation(user: User, current: string): Html {
  const links: [string, string][] =
    user.role.kind === 'operator'
      ? [
          ['/dashboard/accounts', 'Accounts'],
          ['/dashboard/organizations', 'Organizations'],
          ['/dashboard/usage', 'Usage'],
          ['/dashboard/requests', 'Requests'],
          ['/dashboard/jobs', 'Jobs'],
          ['/dashboard/health', 'Health'],
          ['/dashboard/users', 'Users'],
          ['/dashboard/audit', 'Audit log'],
          ['/dashboard/models', 'Models'],
        ]
      : [
          [`/dashboard/owners/${user.role.owner.kind}/${user.role.owner.id}`, 'Overview'],
          ['/dashboard/usage', 'Usage'],
          ['/dashboard/requests', 'Requests'],
          ['/dashboard/jobs', 'Jobs'],
          ['/dashboard/models', 'Models'],
          ['/dashboard/quick-start', 'Quick start'],
        ];
  return html`<nav aria-label="Dashboard">
    <ul>
      ${links.map(([href, label]) => html`<li><a href="${href}"${current.startsWith(href) ? html` aria-current="page"` : ''}>${label}</a></li>`)}
    </ul>
  </nav>`;
}

export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

export function page(frame: Frame, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title} · Gateway</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/dashboard.css?v=${ASSET_VERSION}">
<script src="/dashboard/assets/dashboard.js?v=${ASSET_VERSION}" defer></script>
${(frame.scripts ?? []).map((script) => html`<script src="${script}?v=${ASSET_VERSION}" defer></script>\n`)}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
  <a class="brand" href="/dashboard">Gateway</a>
  ${frame.user ? navigation(frame.user, frame.path) : ''}
  ${
    frame.user
      ? html`<form method="post" action="/dashboard/sign-out" class="signout">
          ${csrfField(frame.csrf)}
          <span class="who">${frame.user.email} (${frame.user.role.kind})</span>
          <button type="submit">Sign out</button>
          <button type="submit" class="secondary" formaction="/dashboard/sign-out-everywhere">Sign out everywhere</button>
        </form>`
      : ''
  }
</header>
<main id="main" tabindex="-1">
<h1>${frame.title}</h1>
${body}
</main>
</body>
</html>`;
}

/** A status line announced to screen readers (a result, or what went wrong). */
export function notice(kind: 'ok' | 'error', text: string | Html): Html {
  return html`<p class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</p>`;
}

/** The body of a table with no rows: one cell that says so. */
/** A JSON value as an indented block. */
export function json(value: unknown, testId?: string): Html {
  return html`<pre${testId ? html` data-testid="${testId}"` : ''}>${JSON.stringify(value, null, 2)}</pre>`;
}

export function noRows(columns: number, text: string): Html {
  return html`<tr><td colspan="${columns}" class="hint">${text}</td></tr>`;
}

/** The link to the next keyset page, keeping the other query parameters. */
export function nextPageLink(path: string, query: Readonly<Record<string, string | undefined>>, next: string | null, param = 'after'): Html {
  if (next === null) return html``;
  const search = new URLSearchParams(
    Object.entries({ ...query, [param]: next }).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  return html`<p><a href="${path}?${search.toString()}" rel="next">Next page</a></p>`;
}

export function time(millis: number | null): Html {
  if (millis === null) return html`<span>never</span>`;
  const iso = new Date(millis).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)} UTC</time>`;
}
