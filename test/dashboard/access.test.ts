/**
 * Who reaches what: every dashboard route (collected from the running app, so a new one must be
 * classified here) for an operator and for members of an account, of another account and of an
 * organization, against owners of their own and others'. A member never reads or changes another
 * owner's data: the answer is 404 (or 403 for operator pages) and the store is unchanged. Then the
 * attacks: no API key reaches a page, CSRF, session fixation, open redirect, clickjacking, the
 * cookie's attributes, throttled sign-ins, idle and absolute expiry, sign-out everywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RouteOptions } from 'fastify';
import { createAuditor, ADMIN_KEY_ACTOR } from '../../src/people/audit.ts';
import { SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../src/people/sessions.ts';
import { passwordHashingOf } from '../../src/people/passwords.ts';
import { createUserOperations } from '../../src/people/users.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { requestLogRecord } from '../../src/pipeline/request-log.ts';
import { ALL_ROUTES } from '../../src/server/routes.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { UsageQueryTimeout } from '../../src/storage/usage.ts';
import { formPost, sessionClient, signIn, type DashboardClient } from '../helpers/dashboard.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const PASSWORD = 'a long enough password';

describe('dashboard access and security', () => {
  let gateway: TestGateway;
  let clock = Date.now();
  const dashboardRoutes: string[] = [];
  const ids: Record<string, string> = {};
  const clients: Record<string, DashboardClient> = {};

  before(async () => {
    const collect = async (app: Parameters<(typeof ALL_ROUTES)[number]>[0]) => {
      app.addHook('onRoute', (route: RouteOptions) => {
        for (const method of [route.method].flat()) {
          if ((method === 'GET' || method === 'POST') && route.url.startsWith('/dashboard')) dashboardRoutes.push(`${method} ${route.url}`);
        }
      });
    };
    gateway = await startGateway({ routes: [collect, ...ALL_ROUTES], now: () => clock });
    const store = gateway.store;
    const org = await store.createOrganization({ name: 'org' });
    const inOrg = await store.createAccount({ name: 'in org', organizationId: org.id });
    const other = await store.createAccount({ name: 'other' });
    Object.assign(ids, { org: org.id, inOrg: inOrg.id, other: other.id, own: gateway.account.id });
    const users = createUserOperations({
      store,
      audit: createAuditor(store, { actor: ADMIN_KEY_ACTOR, source: null }, () => clock),
      actorLabel: 'test',
      now: () => clock,
      hashing: passwordHashingOf(gateway.deps.config),
    });
    const people: [string, Parameters<typeof users.addUser>[0]['role']][] = [
      ['operator', { kind: 'operator' }],
      ['member', { kind: 'member', owner: { kind: 'account', id: gateway.account.id } }],
      ['otherMember', { kind: 'member', owner: { kind: 'account', id: other.id } }],
      ['orgMember', { kind: 'member', owner: { kind: 'organization', id: org.id } }],
    ];
    for (const [name, role] of people) {
      const { user } = await users.addUser({ email: `${name.toLowerCase()}@example.com`, role, password: PASSWORD });
      ids[`user:${name}`] = user.id;
      const { client } = await signIn(gateway.baseUrl, user.email, PASSWORD);
      clients[name] = client!;
    }
    for (const [name, owner] of [
      ['own', { kind: 'account', id: gateway.account.id }],
      ['other', { kind: 'account', id: other.id }],
      ['inOrg', { kind: 'account', id: inOrg.id }],
    ] as [string, OwnerRef][]) {
      const key = await store.createKey({ owner, hash: `hash-${name}-${clock}`, displayPrefix: 'gateway_test' });
      ids[`key:${name}`] = key.id;
    }
    const webhook = await store.createWebhookEndpoint({
      owner: { kind: 'account', id: other.id },
      url: 'https://1.1.1.1/hook',
      secret: 'whsec_x',
      eventTypes: null,
    });
    ids.webhook = webhook.id;
    // A request and a job of the organization's account (which has no webhook: the ended job
    // announces nothing), for the request log's and the jobs' pages.
    const otherOwner: OwnerRef = { kind: 'account', id: inOrg.id };
    const request = requestLogRecord({
      requestId: timeOrderedId('req'),
      owner: otherOwner,
      keyId: ids['key:inOrg']!,
      route: 'chat',
      stream: false,
      createdAt: clock,
      durationMs: 5,
      status: 'completed',
      httpStatus: 200,
      output: { choices: [{ message: { role: 'assistant', content: 'gateway_test secret answer' } }] },
    });
    await store.recordRequests([request]);
    ids.otherRequest = request.id;
    const job = await store.createJob({
      id: timeOrderedId('resp'),
      kind: 'response',
      owner: otherOwner,
      keyId: ids['key:inOrg']!,
      // Ended: no worker picks it up (its payload is no call).
      status: 'completed',
      payload: { note: 'gateway_test' },
      result: { status: 'completed' },
      reservationId: null,
      createdAt: clock,
      expiresAt: clock + 86_400_000,
    });
    ids.otherJob = job.id;
  });
  after(() => gateway?.close());

  const owner = (kind: string, id: string) => `/dashboard/owners/${kind}/${id}`;

  /** Runs `check` while the store's `method` runs past the dashboard's time limit. */
  async function pastTheLimit(method: 'usageText' | 'pageRequests', check: () => Promise<void>): Promise<void> {
    const store = gateway.store as unknown as Record<typeof method, unknown>;
    const read = store[method];
    store[method] = async () => {
      throw new UsageQueryTimeout('the query ran past its limit');
    };
    try {
      await check();
    } finally {
      store[method] = read;
    }
  }

  test('a usage read past its time limit: the page and its export answer 503, saying how to narrow the view', async () => {
    // The store's own limit is tested in test/storage/dashboard-reads.test.ts; here, what the pages make of it.
    await pastTheLimit('usageText', async () => {
      const page = await clients.member!.get('/dashboard/usage');
      assert.equal(page.status, 503);
      assert.match(await page.text(), /This view took too long to read\. Choose a shorter period, the view by day, or a filter\./);
      const csv = await clients.member!.get('/dashboard/usage.csv');
      assert.equal(csv.status, 503);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(await csv.text(), /This export took too long to read\./);
    });
    assert.equal((await clients.member!.get('/dashboard/usage')).status, 200);
    // Any other page whose read ran out of time says so too, rather than failing with a 500.
    await pastTheLimit('pageRequests', async () => {
      const page = await clients.member!.get('/dashboard/requests');
      assert.equal(page.status, 503);
      assert.match(await page.text(), /This page took too long to read\./);
    });
  });

  test('every route × role × owner: members reach their own owner (an organization member its accounts too), nothing else', async () => {
    const pages: Record<string, Record<string, number>> = {
      '/dashboard/accounts': { operator: 200, member: 403, otherMember: 403, orgMember: 403 },
      '/dashboard/organizations': { operator: 200, member: 403, otherMember: 403, orgMember: 403 },
      '/dashboard/users': { operator: 200, member: 403, otherMember: 403, orgMember: 403 },
      '/dashboard/audit': { operator: 200, member: 403, otherMember: 403, orgMember: 403 },
      '/dashboard/models': { operator: 200, member: 200, otherMember: 200, orgMember: 200 },
      '/dashboard/quick-start': { operator: 200, member: 200, otherMember: 200, orgMember: 200 },
      // Usage answers everyone, each with their own figures (test/dashboard/usage.test.ts checks which).
      '/dashboard/usage': { operator: 200, member: 200, otherMember: 200, orgMember: 200 },
      '/dashboard/usage.csv': { operator: 200, member: 200, otherMember: 200, orgMember: 200 },
      [owner('account', ids.own!)]: { operator: 200, member: 200, otherMember: 404, orgMember: 404 },
      [owner('account', ids.other!)]: { operator: 200, member: 404, otherMember: 200, orgMember: 404 },
      [owner('account', ids.inOrg!)]: { operator: 200, member: 404, otherMember: 404, orgMember: 200 },
      [owner('organization', ids.org!)]: { operator: 200, member: 404, otherMember: 404, orgMember: 200 },
      '/dashboard/requests': { operator: 200, member: 200, otherMember: 200, orgMember: 200 },
      [`/dashboard/requests/${ids.otherRequest}`]: { operator: 200, member: 404, otherMember: 404, orgMember: 200 },
      [`/dashboard/requests/${ids.otherRequest}/files/image-0.png`]: { operator: 404, member: 404, otherMember: 404, orgMember: 404 },
      '/dashboard/jobs': { operator: 200, member: 200, otherMember: 200, orgMember: 200 },
      [`/dashboard/jobs/${ids.otherJob}`]: { operator: 200, member: 404, otherMember: 404, orgMember: 200 },
      '/dashboard/health': { operator: 200, member: 403, otherMember: 403, orgMember: 403 },
    };
    for (const [path, expected] of Object.entries(pages)) {
      for (const [role, status] of Object.entries(expected)) {
        const response = await clients[role]!.get(path);
        assert.equal(response.status, status, `${role} GET ${path}`);
        const text = await response.text();
        if (status !== 200) assert.doesNotMatch(text, /gateway_test/, 'nothing of the owner leaks');
      }
    }

    // The lists show what the detail pages do: an organization's member sees its accounts' requests and jobs.
    for (const [list, id] of [
      ['/dashboard/requests', ids.otherRequest!],
      ['/dashboard/jobs', ids.otherJob!],
    ]) {
      assert.match(await (await clients.orgMember!.get(list)).text(), new RegExp(id), `an organization member's ${list}`);
      assert.doesNotMatch(await (await clients.member!.get(list)).text(), new RegExp(id), `another account's member's ${list}`);
    }

    // Changes aimed at the other account, by a member of another owner: refused, and nothing changes.
    const target = owner('account', ids.other!);
    const posts: [string, Record<string, string>, 'member' | 'operator'][] = [
      [`${target}/keys`, { name: 'stolen' }, 'member'],
      [`${target}/keys/${ids['key:other']}/revoke`, {}, 'member'],
      [`${target}/invitations`, { email: 'intruder@example.com' }, 'member'],
      [`${target}/settings`, { training_use: 'on' }, 'operator'],
      [`${target}/credit`, { amount_usd: '100' }, 'operator'],
      [`${target}/webhooks`, { url: 'https://1.1.1.1/x' }, 'operator'],
      [`${target}/webhooks/${ids.webhook}/remove`, {}, 'operator'],
      ['/dashboard/accounts', { name: 'x' }, 'operator'],
      ['/dashboard/organizations', { name: 'x' }, 'operator'],
      ['/dashboard/users/invite', { email: 'x@example.com' }, 'operator'],
      [`/dashboard/users/${ids['user:otherMember']}/reset-link`, {}, 'operator'],
      [`/dashboard/users/${ids['user:otherMember']}/remove`, {}, 'operator'],
      ['/dashboard/invitations/tok_missing/revoke', {}, 'operator'],
    ];
    // A key of the member's own account revoked through the other account's path is not found either.
    posts.push([`${owner('account', ids.own!)}/keys/${ids['key:other']}/revoke`, {}, 'member']);
    // Cancelling the organization account's job, by a member of another owner.
    posts.push([`/dashboard/jobs/${ids.otherJob}/cancel`, {}, 'member']);
    const auditBefore = (await gateway.store.listAudit({}, { limit: 1 })).items[0]?.seq;
    const keysBefore = await gateway.store.listKeys({ kind: 'account', id: ids.other! });
    for (const [path, fields, needs] of posts) {
      for (const role of path.startsWith('/dashboard/jobs/') ? ['member', 'otherMember'] : ['member', 'orgMember']) {
        const response = await clients[role]!.post(path, fields);
        assert.equal(response.status, needs === 'operator' ? 403 : 404, `${role} POST ${path}`);
      }
    }
    assert.equal((await gateway.store.listAudit({}, { limit: 1 })).items[0]?.seq, auditBefore, 'no change was made');
    assert.deepEqual(await gateway.store.listKeys({ kind: 'account', id: ids.other! }), keysBefore);
    assert.equal((await gateway.store.getBalance({ kind: 'account', id: ids.other! })).balance, 0n);
    assert.equal((await gateway.store.getJob(ids.otherJob!))?.status, 'completed', 'the job is as it was');
    // The lists: a member's requests and jobs are their owner's alone.
    for (const list of ['/dashboard/requests', '/dashboard/jobs']) {
      assert.doesNotMatch(await (await clients.member!.get(list)).text(), new RegExp(`${ids.otherRequest}|${ids.otherJob}`), `member ${list}`);
      assert.doesNotMatch(await (await clients.otherMember!.get(list)).text(), new RegExp(`${ids.otherRequest}|${ids.otherJob}`), `other member ${list}`);
      assert.match(await (await clients.operator!.get(list)).text(), new RegExp(`${ids.otherRequest}|${ids.otherJob}`), `operator ${list}`);
    }

    // An organization's member manages the keys of the organization's accounts; a member its own.
    assert.equal((await clients.orgMember!.post(`${owner('account', ids.inOrg!)}/keys`, { name: 'org member key' })).status, 200);
    assert.equal((await clients.member!.post(`${owner('account', ids.own!)}/keys`, { name: 'own key' })).status, 200);

    const classified = new Set([
      ...Object.keys(pages).map(
        (path) =>
          `GET ${path
            .replace(/\/owners\/[^/]+\/[^/]+$/, '/owners/:kind/:id')
            .replace(/\/(requests|jobs)\/[^/]+/, '/$1/:id')
            .replace(/\/files\/[^/]+$/, '/files/:name')}`,
      ),
      ...posts.map(
        ([path]) =>
          `POST ${path
            .replace(/\/owners\/[^/]+\/[^/]+/, '/owners/:kind/:id')
            .replace(/\/(keys|webhooks)\/[^/]+\//, '/$1/:id/')
            .replace(/\/(users|invitations|jobs)\/[^/]+\//, '/$1/:id/')}`,
      ),
    ]);
    const unclassified = dashboardRoutes.filter((route) => {
      const normal = route.replace(':keyId', ':id').replace(':webhookId', ':id');
      return !classified.has(normal) && !PUBLIC_ROUTES.has(route);
    });
    assert.deepEqual(unclassified, [], 'a dashboard route this table does not check');
  });

  test('no API key reaches a dashboard page: a bearer key is ignored (sign-in asked for), a change refused', async () => {
    const bearer = { authorization: `Bearer ${gateway.apiKey}`, 'x-api-key': gateway.apiKey };
    const page = await fetch(`${gateway.baseUrl}${owner('account', ids.own!)}`, { redirect: 'manual', headers: bearer });
    assert.equal(page.status, 303);
    assert.match(page.headers.get('location')!, /^\/dashboard\/sign-in\?next=/);
    const change = await formPost(gateway.baseUrl, `${owner('account', ids.own!)}/keys`, { name: 'x' }, bearer);
    assert.equal(change.status, 403);
  });

  test('CSRF: a change without the session token, with another token, from another origin or site is refused', async () => {
    const client = clients.operator!;
    const path = `${owner('account', ids.own!)}/settings`;
    const cookie = `gateway_session=${client.session}`;
    const before = await gateway.store.getAccount(ids.own!);
    for (const [fields, headers] of [
      [{}, {}],
      [{ _csrf: 'x'.repeat(43) }, {}],
      [{ _csrf: clients.member!.csrf }, {}],
      [{ _csrf: client.csrf }, { origin: 'https://evil.example' }],
      [{ _csrf: client.csrf }, { 'sec-fetch-site': 'cross-site' }],
    ] as [Record<string, string>, Record<string, string>][]) {
      const response = await formPost(gateway.baseUrl, path, { training_use: 'on', ...fields }, { cookie, ...headers });
      assert.equal(response.status, 403, JSON.stringify({ fields, headers }));
    }
    assert.deepEqual(await gateway.store.getAccount(ids.own!), before);
    const signInWithoutFormToken = await formPost(gateway.baseUrl, '/dashboard/sign-in', { email: 'operator@example.com', password: PASSWORD });
    assert.equal(signInWithoutFormToken.status, 403, 'the sign-in form has its own token (no login CSRF)');
    assert.equal((await client.post(path, { training_use: 'on' })).status, 303, 'with its token, from this origin: done');
  });

  test('an operator adds a webhook, its secret shown once, and removes it', async () => {
    const path = owner('account', ids.own!);
    const added = await clients.operator!.post(`${path}/webhooks`, { url: 'https://1.1.1.1/dashboard-hook' });
    assert.equal(added.status, 200);
    const secret = (await added.text()).match(/whsec_[A-Za-z0-9+/=]+/)?.[0];
    const endpoint = (await gateway.store.listWebhookEndpoints({ kind: 'account', id: ids.own! })).find(
      (candidate) => candidate.url === 'https://1.1.1.1/dashboard-hook',
    )!;
    assert.equal(secret, endpoint.secret);
    const later = await (await clients.operator!.get(path)).text();
    assert.doesNotMatch(later, /whsec_/, 'shown once');
    assert.match(later, /No delivery yet/);
    assert.equal((await clients.operator!.post(`${path}/webhooks/${endpoint.id}/remove`)).status, 303);
    assert.equal(await gateway.store.getWebhookEndpoint(endpoint.id), null);
    assert.equal((await gateway.store.listAudit({ action: 'webhook.', actor: 'operator@example.com' }, { limit: 5 })).items.length, 2);
  });

  test('session fixation: a cookie set before sign-in never becomes the session; the new one is fresh', async () => {
    const planted = (await signIn(gateway.baseUrl, 'member@example.com', PASSWORD)).client!.session;
    const { response, client } = await signIn(gateway.baseUrl, 'operator@example.com', PASSWORD, { presetSession: planted });
    assert.ok(client);
    assert.notEqual(client.session, planted);
    assert.equal(response.headers.get('location'), '/dashboard');
    assert.equal(
      (await (await sessionClient(gateway.baseUrl, planted)).get('/dashboard')).headers.get('location')?.startsWith('/dashboard/sign-in'),
      true,
      'the session the browser had is over',
    );
    const forged = await fetch(`${gateway.baseUrl}/dashboard`, { redirect: 'manual', headers: { cookie: 'gateway_session=made-up-by-an-attacker' } });
    assert.match(forged.headers.get('location')!, /^\/dashboard\/sign-in/);
  });

  test('open redirect: after sign-in, only a dashboard path is followed', async () => {
    for (const [next, location] of [
      ['/dashboard/audit?action=key.', '/dashboard/audit?action=key.'],
      ['//evil.example/dashboard', '/dashboard'],
      ['https://evil.example/', '/dashboard'],
      ['/\\evil.example', '/dashboard'],
      ['/dashboard//evil.example', '/dashboard'],
      ['/dashboardx', '/dashboard'],
      ['javascript:alert(1)', '/dashboard'],
    ]) {
      const { response } = await signIn(gateway.baseUrl, 'operator@example.com', PASSWORD, { next });
      assert.equal(response.headers.get('location'), location, next);
    }
  });

  test('clickjacking and the other headers, the cookie attributes', async () => {
    for (const response of [
      await fetch(`${gateway.baseUrl}/dashboard/sign-in`),
      await clients.operator!.get('/dashboard/accounts'),
      await clients.member!.get('/dashboard/users'),
      await fetch(`${gateway.baseUrl}/dashboard/no-such-page`),
    ]) {
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      assert.match(response.headers.get('content-security-policy')!, /frame-ancestors 'none'/);
      assert.match(response.headers.get('content-security-policy')!, /script-src 'self'(;|$)/);
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    }
    const { response } = await signIn(gateway.baseUrl, 'operator@example.com', PASSWORD);
    const cookie = response.headers.getSetCookie().find((header) => header.startsWith('gateway_session='))!;
    assert.match(cookie, /; Path=\/dashboard/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/, 'plain HTTP: no Secure flag, or the browser would drop it');
  });

  test('sign-ins are throttled per email with a clear message, and counted from the audit rows', async () => {
    const users = createUserOperations({
      store: gateway.store,
      audit: async () => {},
      actorLabel: 'test',
      now: () => clock,
      hashing: passwordHashingOf(gateway.deps.config),
    });
    await users.addUser({ email: 'throttled@example.com', role: { kind: 'operator' }, password: PASSWORD });
    for (let attempt = 0; attempt < 5; attempt += 1)
      assert.equal((await signIn(gateway.baseUrl, 'throttled@example.com', 'wrong password!')).response.status, 401);
    const refused = await signIn(gateway.baseUrl, 'throttled@example.com', PASSWORD);
    assert.equal(refused.response.status, 429);
    assert.match(await refused.response.text(), /Too many failed sign-ins/);
    clock += 16 * 60 * 1000;
    assert.ok((await signIn(gateway.baseUrl, 'throttled@example.com', PASSWORD)).client, 'the window passed');
  });

  test('sessions end when idle, at their absolute end, and everywhere at once', async () => {
    const idle = (await signIn(gateway.baseUrl, 'operator@example.com', PASSWORD)).client!;
    clock += SESSION_IDLE_MS + 1;
    assert.equal((await idle.get('/dashboard/accounts')).status, 303, 'idle too long');

    const busy = (await signIn(gateway.baseUrl, 'operator@example.com', PASSWORD)).client!;
    for (let elapsed = 0; elapsed + SESSION_IDLE_MS / 2 < SESSION_ABSOLUTE_MS; elapsed += SESSION_IDLE_MS / 2) {
      clock += SESSION_IDLE_MS / 2;
      assert.equal((await busy.get('/dashboard/accounts')).status, 200);
    }
    clock += SESSION_IDLE_MS / 2;
    assert.equal((await busy.get('/dashboard/accounts')).status, 303, 'past the absolute end');

    const laptop = (await signIn(gateway.baseUrl, 'member@example.com', PASSWORD)).client!;
    const phone = (await signIn(gateway.baseUrl, 'member@example.com', PASSWORD)).client!;
    assert.equal((await phone.post('/dashboard/sign-out-everywhere')).status, 303);
    assert.equal((await laptop.get('/dashboard/quick-start')).status, 303);
    assert.equal((await phone.get('/dashboard/quick-start')).status, 303);
  });
});

/** Pages before sign-in, and what every signed-in user has: checked by the tests above by name. */
const PUBLIC_ROUTES = new Set([
  'GET /dashboard',
  'GET /dashboard/sign-in',
  'POST /dashboard/sign-in',
  'GET /dashboard/link',
  'POST /dashboard/link',
  'GET /dashboard/bootstrap',
  'POST /dashboard/bootstrap',
  'POST /dashboard/sign-out',
  'POST /dashboard/sign-out-everywhere',
  'GET /dashboard/assets/:name',
  'GET /dashboard/*',
]);
