/**
 * Usage analytics in headless Chromium, on SQLite and on PostgreSQL: a member's requests, made
 * through the openai SDK, show on their usage page (totals, the charts drawn from the tables) and
 * in its CSV export exactly as they cost (the x-gateway-cost-usd of each answer), while another
 * account's requests stay out of their view, whatever the query asks. No console error, no serious
 * accessibility violation. With DASHBOARD_SCREENSHOTS=<dir>, the SQLite run saves the page there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import { requestLogRecord } from '../../src/pipeline/request-log.ts';
import { flushRequestLog } from '../chat/helpers.ts';
import { call } from '../helpers/http.ts';
import { assertAccessible, browserForTests, screenshotter, submitSignIn, watchedPage } from '../helpers/browser.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const ADMIN_KEY = 'admin-secret-for-usage-tests-0123456789';
const MEMBER = { email: 'usage@example.com', password: 'a long usage passphrase' };
const MODEL = 'gateway/atlas-4-5';
const browser = browserForTests();

/** Chat completions with the key; returns the cost of each answer in pico-USD. */
async function chat(gateway: TestGateway, apiKey: string, prompts: readonly string[]): Promise<bigint[]> {
  const client = new OpenAI({ apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
  const costs: bigint[] = [];
  for (const prompt of prompts) {
    const { response } = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: prompt }], max_tokens: 40 }).withResponse();
    costs.push(usdToPicos(response.headers.get('x-gateway-cost-usd')!));
  }
  return costs;
}

function csvRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trimEnd().split('\r\n');
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, index) => [names[index]!, value])));
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`usage analytics in a browser (${engine})`, () => {
    const shoot = screenshotter(engine);
    let gateway: TestGateway;
    before(async () => {
      gateway = await startGateway({ engine, adminKey: ADMIN_KEY });
    });
    after(() => gateway?.close());

    test("a member's usage chart and CSV match what their requests cost, and show no other account", async () => {
      const created = await call(gateway.baseUrl, 'POST', '/admin/v1/users', {
        key: ADMIN_KEY,
        json: { ...MEMBER, role: 'member', account_id: gateway.account.id },
      });
      assert.equal(created.status, 200, created.text);
      const other = await gateway.store.createAccount({ name: 'someone else' });
      await gateway.store.addCredit({ kind: 'account', id: other.id }, usdToPicos('5'));
      const otherKey = await gateway.createKey({ owner: { kind: 'account', id: other.id } });

      const costs = await chat(gateway, gateway.apiKey, ['one', 'two, a little longer', 'three: the longest prompt of the three, by a few words']);
      await chat(gateway, otherKey, ['not yours']);
      // A refused request: a row with its status, no cost.
      const refused = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { model: 'no-such-model', messages: [] } });
      assert.ok(refused.status >= 400);
      await flushRequestLog(gateway);
      const spent = costs.reduce((total, cost) => total + cost, 0n);
      assert.ok(spent > 0n);

      const context = await browser().newContext({ acceptDownloads: true });
      const { page, problems } = await watchedPage(context);
      try {
        await page.goto(`${gateway.baseUrl}/dashboard/sign-in`);
        await submitSignIn(page, MEMBER);
        await page.getByRole('link', { name: 'Usage' }).click();
        await page.waitForURL(/\/dashboard\/usage$/);
        assert.equal(await page.getByTestId('usage-spend').textContent(), `${formatUsd(spent)} USD`);
        assert.equal(await page.getByTestId('usage-requests').textContent(), '4');
        // The charts are drawn (Chart.js, from the gateway's own assets) above their tables.
        await page.locator('#usage-spend-table-chart').waitFor({ state: 'visible' });
        assert.ok(((await page.locator('#usage-spend-table-chart').boundingBox())?.height ?? 0) > 100);
        await assertAccessible(page);

        // Broken down by status, per hour: the spend table's total column holds the same sum.
        await page.getByLabel('Per', { exact: true }).selectOption('hour');
        await page.getByLabel('Break down by').selectOption('status');
        await page.getByRole('button', { name: 'Show' }).click();
        await page.waitForURL(/by=status/);
        const headers = await page.locator('#usage-spend-table thead th').allTextContents();
        assert.deepEqual(headers.slice(1).sort(), ['Total', 'completed', 'failed'].sort());
        const totals = await page.locator('#usage-spend-table tbody tr td:last-child').allTextContents();
        assert.equal(
          totals.reduce((total, cell) => total + usdToPicos(cell), 0n),
          spent,
        );
        await assertAccessible(page);
        await shoot(page, 'usage-hourly');

        // The CSV of the view: the pico-USD column sums to the cost of the member's requests.
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download this view as CSV' }).click()]);
        const csv = csvRows(await (await download.createReadStream()).toArray().then((chunks) => Buffer.concat(chunks).toString('utf8')));
        assert.equal(
          csv.reduce((total, row) => total + BigInt(row.spend_picousd!), 0n),
          spent,
        );
        assert.equal(
          csv.reduce((total, row) => total + Number(row.requests), 0),
          4,
        );
        assert.deepEqual([...new Set(csv.map((row) => row.status))].sort(), ['completed', 'failed']);

        // Asking for another account changes nothing: a member's view is their own.
        const asked = await page.request.get(`${gateway.baseUrl}/dashboard/usage.csv?account=${other.id}`);
        assert.equal(asked.status(), 200);
        const shown = csvRows(await asked.text());
        assert.equal(
          shown.reduce((total, row) => total + BigInt(row.spend_picousd!), 0n),
          spent,
        );
        assert.deepEqual(problems, []);

        if (shoot.enabled) {
          // Two weeks of made-up traffic on three models, for a screenshot with something to show.
          const day = 86_400_000;
          const rows = Array.from({ length: 14 * 3 * 4 }, (_, index) => {
            const model = ['gateway/atlas-4-5', 'gateway/atlas-mini', 'gateway/nova-pro'][index % 3]!;
            const createdAt = Date.now() - Math.floor(index / 12) * day - (index % 4) * 3_600_000;
            return requestLogRecord({
              requestId: `req_shot_${index}`,
              owner: { kind: 'account', id: gateway.account.id },
              keyId: 'key_screenshot',
              route: 'chat',
              stream: false,
              createdAt,
              durationMs: 300,
              modelId: model,
              status: 'completed',
              httpStatus: 200,
              logged: {
                searchUnits: 0,
                usage: {
                  inputTokens: 800 + index * 13,
                  outputTokens: 300 + index * 7,
                  cacheReadTokens: (index % 5) * 200,
                  cacheWriteTokens: 0,
                  reasoningTokens: index % 50,
                },
              },
              cost: BigInt(2_000_000_000 + (index % 7) * 900_000_000 + (index % 3) * 1_500_000_000),
              cacheSavings: BigInt((index % 5) * 200 * 2_700_000),
            });
          });
          await gateway.store.recordRequests(rows);
          await page.goto(`${gateway.baseUrl}/dashboard/usage?by=model`);
          await page.locator('#usage-spend-table-chart').waitFor({ state: 'visible' });
          await shoot(page, 'usage');
        }
      } finally {
        await context.close();
      }
    });
  });
}
