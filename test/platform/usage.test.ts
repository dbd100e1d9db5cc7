/**
 * The usage report (GET /admin/v1/usage and `gateway usage`) over real HTTP on both engines: served
 * requests are counted apart from refused ones, so that its request count and cost agree with the
 * ledger's charges even when some requests were refused for lack of credit (402).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli/run.ts';
import { formatUsd } from '../../src/core/money.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { endpoint, flushRequestLog, model, simulatedConfig } from '../chat/helpers.ts';

const ADMIN_KEY = 'admin-secret-for-tests';
const config = simulatedConfig([model('gateway/echo', [endpoint('sim-echo')])]);
const SERVED = 3;
const REFUSED = 2;

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`usage report: served and refused requests (${engine})`, () => {
    let gateway: TestGateway;
    // 1 cent: enough for short answers, not for the worst case of 8,192 output tokens at 2 $/M.
    before(async () => {
      gateway = await startGateway({ engine, config, adminKey: ADMIN_KEY, creditUsd: '0.01' });
    });
    after(() => gateway.close());

    const chat = (maxTokens: number) =>
      call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
        key: gateway.apiKey,
        json: { model: 'gateway/echo', max_tokens: maxTokens, messages: [{ role: 'user', content: 'count me' }] },
      });

    test('402s are refused requests, not requests; requests and cost agree with the ledger', async () => {
      for (let index = 0; index < SERVED; index++) assert.equal((await chat(16)).status, 200);
      for (let index = 0; index < REFUSED; index++) assert.equal((await chat(8_192)).status, 402);
      await flushRequestLog(gateway);

      const charges = (await gateway.store.listEntries({ kind: 'account', id: gateway.account.id })).filter((entry) => entry.kind === 'charge');
      assert.equal(charges.length, SERVED);
      const charged = formatUsd(charges.reduce((sum, entry) => sum + entry.amount, 0n));

      const usage = await call(gateway.baseUrl, 'GET', `/admin/v1/usage?account_id=${gateway.account.id}`, { key: ADMIN_KEY });
      assert.equal(usage.status, 200, usage.text);
      assert.deepEqual(
        usage.body.data.map((row: Record<string, unknown>) => [row.model, row.requests, row.refused_requests, row.cost_usd]),
        [['gateway/echo', SERVED, REFUSED, charged]],
      );
      assert.equal(usage.body.total.requests, SERVED);
      assert.equal(usage.body.total.refused_requests, REFUSED);
      assert.equal(usage.body.total.cost_usd, charged);

      let stdout = '';
      const code = await runCli(['usage', '--account', gateway.account.id], {
        env: gateway.cliEnv,
        stdout: (text) => (stdout += text),
        stderr: () => undefined,
      });
      assert.equal(code, 0);
      const [header, ...lines] = stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/));
      assert.deepEqual(header, ['MODEL', 'REQUESTS', 'REFUSED_REQUESTS', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'COST_USD', 'OVER_HOLD_REQUESTS', 'OVER_HOLD_USD']);
      assert.deepEqual(
        lines.map((line) => [line[0], line[1], line[2], line[5]]),
        [
          ['gateway/echo', String(SERVED), String(REFUSED), charged],
          ['TOTAL', String(SERVED), String(REFUSED), charged],
        ],
      );
    });
  });
}
