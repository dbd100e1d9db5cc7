/**
 * Text a database cannot hold as it is (NUL, unpaired surrogates) in a valid request, over real
 * HTTP on both engines: the hostile requests are served and logged with the exact output their
 * client received, and a bystander's requests, written in the same batches, all appear in the
 * admin usage report, which agrees with the ledger's charges for both accounts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { endpoint, flushRequestLog, model, simulatedConfig } from '../chat/helpers.ts';

const ADMIN_KEY = 'admin-secret-for-tests';
const config = simulatedConfig([model('gateway/echo', [endpoint('sim-echo')])]);
/** The simulated model quotes the prompt, so each of these reaches the stored output too. */
const HOSTILE = ['evil \u0000', 'evil \ud800', 'evil \udfff and \u0000 and \ud83d', 'evil "\\u0000" \u0000\u0000'];
const PER_ACCOUNT = 20;

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`hostile text beside a bystander (${engine})`, () => {
    let gateway: TestGateway;
    let bystander: { owner: OwnerRef; key: string };

    before(async () => {
      gateway = await startGateway({ engine, config, adminKey: ADMIN_KEY });
      const account = await gateway.store.createAccount({ name: 'bystander' });
      const owner: OwnerRef = { kind: 'account', id: account.id };
      await gateway.store.addCredit(owner, usdToPicos('10'), 'test credit');
      bystander = { owner, key: await gateway.createKey({ owner }) };
    });
    after(() => gateway.close());

    const chat = (key: string, content: string) =>
      call(gateway.baseUrl, 'POST', '/v1/chat/completions', { key, json: { model: 'gateway/echo', messages: [{ role: 'user', content }] } });

    /** The admin usage report of an owner beside what its ledger charged. */
    const usageAndCharges = async (owner: OwnerRef) => {
      const usage = await call(gateway.baseUrl, 'GET', `/admin/v1/usage?account_id=${owner.id}`, { key: ADMIN_KEY });
      assert.equal(usage.status, 200, usage.text);
      const charges = (await gateway.store.listEntries(owner)).filter((entry) => entry.kind === 'charge');
      return {
        usage: { requests: usage.body.total.requests, cost: usage.body.total.cost_usd },
        ledger: { requests: charges.length, cost: formatUsd(charges.reduce((sum, entry) => sum + entry.amount, 0n)) },
      };
    };

    test('every charged request of both accounts is in the usage report, and hostile outputs are stored exactly', async () => {
      const hostileOwner: OwnerRef = { kind: 'account', id: gateway.account.id };
      const responses = await Promise.all(
        Array.from({ length: PER_ACCOUNT }, (_, index) => [
          chat(gateway.apiKey, HOSTILE[index % HOSTILE.length]),
          chat(bystander.key, `ordinary request ${index}`),
        ]).flat(),
      );
      for (const response of responses) assert.equal(response.status, 200, response.text);
      await flushRequestLog(gateway);

      for (const owner of [bystander.owner, hostileOwner]) {
        const { usage, ledger } = await usageAndCharges(owner);
        assert.equal(ledger.requests, PER_ACCOUNT);
        assert.deepEqual(usage, ledger, `usage of ${owner.id}`);
      }

      const hostile = responses.filter((_, index) => index % 2 === 0);
      for (const [index, response] of hostile.slice(0, HOSTILE.length).entries()) {
        const content = (response.body as { choices: Array<{ message: { content: string } }> }).choices[0].message.content;
        assert.ok(content.includes(HOSTILE[index].slice('evil '.length)), `the reply quotes the hostile prompt: ${JSON.stringify(content)}`);
        const row = await gateway.store.getRequest(response.headers.get('x-gateway-request-id')!);
        assert.ok(row, 'the hostile request has its row');
        assert.deepEqual(row.output, response.body, 'the stored output is what the client received');
      }
    });
  });
}
