/**
 * Limits set and changed through the admin API and the `gateway` command: an organization's limits
 * hold over all its keys together (requests per minute and spend), a key's limits can be replaced
 * and take effect at once on the instance that changed them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { usdToPicos } from '../../src/core/money.ts';
import { endpoint, model, simulatedConfig } from '../chat/helpers.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { runCli } from '../../src/cli/run.ts';

const ADMIN_KEY = 'admin-secret-for-limit-tests';
const config = simulatedConfig([model('gateway/limited', [endpoint('sim-limited')])]);
const chat = { model: 'gateway/limited', max_tokens: 100, messages: [{ role: 'user', content: 'Count me.' }] };

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`limits through the admin API (${engine})`, () => {
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ config, engine, adminKey: ADMIN_KEY });
    });
    after(() => gateway?.close());
    const admin = (method: string, path: string, json?: unknown) => call(gateway.app, method, `/admin/v1${path}`, { key: ADMIN_KEY, json });

    test("an organization's requests per minute are shared by all its keys", async () => {
      const created = await admin('POST', '/organizations', { name: 'Limited org', limits: { requests_per_minute: 4 } });
      assert.equal(created.status, 200, created.text);
      assert.deepEqual(created.body.limits, { requests_per_minute: 4 });
      const organization = created.body.id as string;
      const keys = await Promise.all([0, 1].map(async () => (await admin('POST', '/keys', { organization_id: organization })).body.key as string));
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => call(gateway.app, 'GET', '/v1/models', { key: keys[i % 2] })));
      assert.equal(answers.filter((answer) => answer.status === 200).length, 4);
      for (const answer of answers.filter((answer) => answer.status !== 200)) {
        assertError(answer, { status: 429, type: 'rate_limit_error', code: 'requests_per_minute_exceeded' });
        assert.match(answer.body.error.message, /organization/);
      }
      // Removing the limit frees both keys at once.
      const patched = await admin('PATCH', `/organizations/${organization}`, { limits: null });
      assert.equal(patched.body.limits, null);
      assert.equal((await call(gateway.app, 'GET', '/v1/models', { key: keys[0] })).status, 200);
    });

    test("an organization's spend cap holds over all its keys together", async () => {
      const organization = (await admin('POST', '/organizations', { name: 'Capped org', limits: { spend_limit_usd: '0.001' } })).body.id as string;
      await admin('POST', `/organizations/${organization}/credit`, { amount_usd: '5' });
      const keys = await Promise.all([0, 1, 2].map(async () => (await admin('POST', '/keys', { organization_id: organization })).body.key as string));
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) => call(gateway.app, 'POST', '/v1/chat/completions', { key: keys[i % 3], json: chat })),
      );
      assert.ok(answers.some((answer) => answer.status === 200));
      for (const answer of answers.filter((answer) => answer.status !== 200)) {
        assertError(answer, { status: 429, type: 'rate_limit_error', code: 'spend_limit_exceeded' });
      }
      const balance = (await admin('GET', `/organizations/${organization}`)).body;
      const spent = usdToPicos('5') - usdToPicos(balance.balance_usd);
      assert.ok(spent > 0n && spent <= usdToPicos('0.001'), `spent ${spent}`);
      assert.equal(usdToPicos(balance.usage.spend_limit_usd.spent_usd), spent);
      assert.equal(balance.reserved_usd, '0');
    });

    test("a key's limits are replaced with PATCH and apply to its next request", async () => {
      const created = await admin('POST', '/keys', { account_id: gateway.account.id, limits: { requests_per_minute: 100 } });
      const { id, key } = created.body as { id: string; key: string };
      assert.equal((await call(gateway.app, 'GET', '/v1/models', { key })).headers.get('x-ratelimit-limit-requests'), '100');
      const patched = await admin('PATCH', `/keys/${id}`, { limits: { requests_per_minute: 1, spend_per_day_usd: '2.50' } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(patched.body.limits, { requests_per_minute: 1, spend_per_day_usd: '2.50' });
      assert.deepEqual((await admin('GET', `/keys/${id}`)).body.limits, { requests_per_minute: 1, spend_per_day_usd: '2.50' });
      // The bucket already holds one request: with a limit of one, the next waits.
      assertError(await call(gateway.app, 'GET', '/v1/models', { key }), { status: 429, type: 'rate_limit_error', code: 'requests_per_minute_exceeded' });
      // GET shows where each limit stands: the requests counter, and the day's spend from the ledger.
      await call(gateway.app, 'PATCH', `/admin/v1/keys/${id}`, {
        key: ADMIN_KEY,
        json: { limits: { requests_per_minute: 60, spend_per_day_usd: '2.50', concurrent_requests: 3 } },
      });
      const chatted = await call(gateway.app, 'POST', '/v1/chat/completions', { key, json: chat });
      assert.equal(chatted.status, 200, chatted.text);
      const shown = (await admin('GET', `/keys/${id}`)).body.usage;
      assert.equal(shown.requests_per_minute.limit, 60);
      assert.ok(shown.requests_per_minute.remaining < 60 && shown.requests_per_minute.reset_seconds > 0, JSON.stringify(shown));
      assert.deepEqual(shown.concurrent_requests, { limit: 3, in_use: 0 });
      assert.deepEqual(shown.spend_per_day_usd, { limit: '2.50', spent_usd: chatted.headers.get('x-gateway-cost-usd'), held_usd: '0' });
      const bad = await admin('PATCH', `/keys/${id}`, { limits: { spend_limit_usd: '0' } });
      assertError(bad, { status: 400, type: 'invalid_request_error', code: 'invalid_value', param: 'limits.spend_limit_usd' });
      assertError(await admin('PATCH', '/keys/key_missing', { limits: null }), { status: 404, type: 'invalid_request_error', code: 'not_found' });
    });

    /** The command line in this process, on this gateway's database. */
    async function gatewayCommand(...args: string[]) {
      let stdout = '';
      let stderr = '';
      const code = await runCli(args, { env: gateway.cliEnv, stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
      return { code, stdout, stderr };
    }

    test('gateway keys set-limits and orgs set-limits', async () => {
      const created = await admin('POST', '/keys', { account_id: gateway.account.id });
      const set = await gatewayCommand('keys', 'set-limits', created.body.id, '--requests-per-minute', '3', '--spend-per-month-usd', '10', '--json');
      assert.equal(set.code, 0, set.stderr);
      assert.deepEqual(JSON.parse(set.stdout).limits, { requests_per_minute: 3, spend_per_month_usd: '10' });
      const cleared = await gatewayCommand('keys', 'set-limits', created.body.id, '--json');
      assert.equal(JSON.parse(cleared.stdout).limits, null);
      const organization = (await admin('POST', '/organizations', { name: 'CLI org' })).body.id as string;
      const org = await gatewayCommand('orgs', 'set-limits', organization, '--concurrent-requests', '2', '--json');
      assert.equal(org.code, 0, org.stderr);
      assert.deepEqual(JSON.parse(org.stdout).limits, { concurrent_requests: 2 });
      const wrong = await gatewayCommand('keys', 'set-limits', created.body.id, '--tokens-per-minute', 'many');
      assert.equal(wrong.code, 2);
    });
  });
}
