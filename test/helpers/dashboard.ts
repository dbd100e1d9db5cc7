/**
 * A dashboard client over plain HTTP for tests: signs in like a browser (the form cookie, then the
 * session cookie), and posts forms with the session's CSRF token read from a page.
 */
import assert from 'node:assert/strict';

export interface DashboardClient {
  /** The session cookie's value. */
  readonly session: string;
  readonly csrf: string;
  get(path: string): Promise<Response>;
  post(path: string, fields?: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
}

export function cookieValue(response: Response, name: string): string | undefined {
  for (const header of response.headers.getSetCookie()) {
    const [pair] = header.split(';');
    const [key, value] = pair!.split('=');
    if (key === name) return value;
  }
  return undefined;
}

export function csrfOf(html: string): string {
  const token = html.match(/name="_csrf" value="([^"]+)"/)?.[1];
  assert.ok(token, 'the page has a CSRF field');
  return token;
}

export async function formPost(baseUrl: string, path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: baseUrl, ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Signs in through the form; `presetSession` is a session cookie the browser already had. */
export async function signIn(
  baseUrl: string,
  email: string,
  password: string,
  options: { next?: string; presetSession?: string } = {},
): Promise<{ response: Response; client: DashboardClient | null }> {
  const form = await fetch(`${baseUrl}/dashboard/sign-in`, { redirect: 'manual' });
  const formCookie = cookieValue(form, 'gateway_form')!;
  const cookies = [`gateway_form=${formCookie}`, ...(options.presetSession ? [`gateway_session=${options.presetSession}`] : [])].join('; ');
  const response = await formPost(
    baseUrl,
    '/dashboard/sign-in',
    { _csrf: formCookie, email, password, next: options.next ?? '/dashboard' },
    { cookie: cookies },
  );
  const session = cookieValue(response, 'gateway_session');
  if (!session) return { response, client: null };
  return { response, client: await sessionClient(baseUrl, session) };
}

export async function sessionClient(baseUrl: string, session: string): Promise<DashboardClient> {
  const cookie = `gateway_session=${session}`;
  const get = (path: string) => fetch(`${baseUrl}${path}`, { redirect: 'manual', headers: { cookie } });
  const quick = await get('/dashboard/quick-start');
  const csrf = quick.status === 200 ? csrfOf(await quick.text()) : '';
  return {
    session,
    csrf,
    get,
    post: (path, fields = {}, headers = {}) => formPost(baseUrl, path, { _csrf: csrf, ...fields }, { cookie, ...headers }),
  };
}
