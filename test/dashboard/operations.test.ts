/**
 * The request log, jobs and health pages in headless Chromium, on SQLite and on PostgreSQL: a
 * member opens an image request that fell back (its first endpoint answered 503, the second served)
 * and sees its canonical request, the waterfall, the charge the client was told and the image; a
 * video job's page leads to its request, whose video plays; cancelling a running background
 * response from its page releases its hold in full and is audited; the operator's health page shows
 * each endpoint's last hour from the request rows, and its integrity panel finds every wallet
 * consistent, then lists the one whose balance was changed by hand in the database. Every page: no
 * console error, no serious accessibility violation. With DASHBOARD_SCREENSHOTS=<dir>, the SQLite
 * run saves screenshots.
 */
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import pg from 'pg';
import type { Page } from 'playwright-core';
import type { GatewayConfig } from '../../src/config/schema.ts';
import { formatUsd } from '../../src/core/money.ts';
import { SQLITE_FILE_NAME } from '../../src/storage/open-store.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { eventually, flushRequestLog } from '../chat/helpers.ts';
import { assertAccessible, browserForTests, screenshotter, submitSignIn, watchedPage } from '../helpers/browser.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { RESPONSE_RUNNING, untilEnded } from '../helpers/jobs.ts';
import { IMAGE_CAPABILITIES, imageModel } from '../images/helpers.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { startOpenAIImagesSimulator, type OpenAIImagesSimulator } from '../simulators/openai-images.ts';
import { endedVideo, submitVideo, videoEndpoint, videoModel } from '../videos/helpers.ts';

const ADMIN_KEY = 'admin-secret-for-operations-tests-0123456789';
const OPERATOR = { email: 'ops@example.com', password: 'correct horse battery staple' };
const MEMBER = { email: 'dev@example.com', password: 'another long passphrase' };
const UPSTREAM_KEY = 'sk-upstream';
const browser = browserForTests();

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`the request log, jobs and health pages (${engine})`, () => {
    let down: OpenAIImagesSimulator;
    let up: OpenAIImagesSimulator;
    let chat: OpenAIChatSimulator;
    let gateway: TestGateway;
    let owner: OwnerRef;

    before(async () => {
      down = await startOpenAIImagesSimulator({ apiKey: UPSTREAM_KEY });
      up = await startOpenAIImagesSimulator({ apiKey: UPSTREAM_KEY });
      chat = await startOpenAIChatSimulator({ apiKey: UPSTREAM_KEY });
      const text = chatModelsConfig({
        'gateway/background': [{ id: 'chat', kind: 'openai', baseUrl: chat.baseUrl, apiKeyEnv: 'UPSTREAM_KEY', timeoutMs: 60_000 }],
      });
      const image = (provider: string) => ({
        provider,
        model: 'gpt-image-1',
        supply: 'first_party' as const,
        training_use: 'never' as const,
        pricing: { unit: 'per_image' as const, per_image: 0.02 },
        capabilities: IMAGE_CAPABILITIES,
        limits: { max_images: 2, supported_sizes: ['16x16'] },
      });
      const config: GatewayConfig = {
        ...text,
        providers: [
          ...text.providers,
          { id: 'pics-down', kind: 'openai-images', base_url: down.baseUrl, api_key_env: 'UPSTREAM_KEY' },
          { id: 'pics-up', kind: 'openai-images', base_url: up.baseUrl, api_key_env: 'UPSTREAM_KEY' },
          { id: 'sim', kind: 'simulated', simulated: { video_delay_ms: 50 } },
        ],
        models: [
          ...text.models,
          imageModel('gateway/pictures', [image('pics-down'), image('pics-up')]),
          videoModel('gateway/clip', [videoEndpoint('sim-clip', { limits: { max_duration_seconds: 2 }, video: { default_duration_seconds: 2 } })]),
        ],
        jobs: { concurrency: 2, poll_interval_ms: 20 },
        videos: { poll_interval_ms: 20, max_poll_interval_ms: 50 },
      };
      gateway = await startGateway({ engine, config, env: { UPSTREAM_KEY }, adminKey: ADMIN_KEY, creditUsd: '20' });
      owner = { kind: 'account', id: gateway.account.id };
      for (const [user, role] of [
        [OPERATOR, { role: 'operator' }],
        [MEMBER, { role: 'member', account_id: gateway.account.id }],
      ] as const) {
        const created = await call(gateway.baseUrl, 'POST', '/admin/v1/users', { key: ADMIN_KEY, json: { ...user, ...role } });
        assert.equal(created.status, 200, created.text);
      }
    });
    after(async () => {
      await gateway?.close();
      await Promise.all([down?.close(), up?.close(), chat?.close()]);
    });

    const shoot = screenshotter(engine);
    /** A signed-in page of a new browser context; its problems are checked at the end. */
    const signedIn = async (user: { email: string; password: string }) => {
      const context = await browser().newContext();
      const watched = await watchedPage(context);
      await watched.page.goto(`${gateway.baseUrl}/dashboard/sign-in`);
      await submitSignIn(watched.page, user);
      await watched.page.waitForURL(/\/dashboard\/(owners|accounts)/);
      return { ...watched, close: () => context.close() };
    };
    const visit = async (page: Page, path: string) => {
      await page.goto(`${gateway.baseUrl}${path}`);
      await assertAccessible(page);
    };
    const cells = (page: Page, testId: string) =>
      page
        .getByTestId(testId)
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '')));

    test('an image request that fell back: its waterfall, the charge the client was told, the image', async () => {
      down.enqueue({ kind: 'status', status: 503, message: 'overloaded' });
      const openai = new OpenAI({ apiKey: gateway.apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
      const { data, response } = await openai.images
        .generate({ model: 'gateway/pictures', prompt: 'a lighthouse', n: 1, size: '16x16' as never, response_format: 'b64_json' })
        .withResponse();
      assert.equal(data.data?.length, 1);
      const requestId = response.headers.get('x-gateway-request-id')!;
      const cost = response.headers.get('x-gateway-cost-usd')!;
      await flushRequestLog(gateway);
      const member = await signedIn(MEMBER);
      try {
        const { page } = member;
        await visit(page, '/dashboard/requests');
        await page.getByRole('link', { name: requestId }).click();
        await page.waitForURL(new RegExp(`/dashboard/requests/${requestId}$`));
        await assertAccessible(page);
        const attempts = await cells(page, 'attempts');
        assert.deepEqual(
          attempts.map((row) => [row[1], row[2]]),
          [
            ['pics-down · gpt-image-1', 'failed: 503 upstream_unavailable'],
            ['pics-up · gpt-image-1', 'served'],
          ],
        );
        assert.match(attempts[0]![6]!, /overloaded/, 'why the second endpoint was tried');
        const asked = (await page.getByTestId('canonical-request').textContent()) ?? '';
        assert.match(asked, /"prompt": "a lighthouse"/, 'the canonical request is shown');
        for (const secret of [gateway.apiKey, UPSTREAM_KEY]) assert.ok(!asked.includes(secret), 'no key is kept with the request');
        assert.equal(await page.getByTestId('charged').textContent(), `${cost} USD`);
        const image = page.getByRole('img', { name: /Generated image/ });
        await image.waitFor();
        const width = await image.evaluate(async (element) => {
          const picture = element as unknown as { complete: boolean; naturalWidth: number };
          while (!picture.complete) await new Promise((resolve) => setTimeout(resolve, 20));
          return picture.naturalWidth;
        });
        assert.equal(width, 16, 'the image loaded');
        // The file is an upstream's bytes: served so that it can never run as a page of the dashboard.
        const file = await page.request.get((await image.getAttribute('src'))!.replace(/^\//, `${gateway.baseUrl}/`));
        assert.equal(file.headers()['content-security-policy'], "default-src 'none'; sandbox");
        assert.equal(file.headers()['x-content-type-options'], 'nosniff');
        await shoot(page, 'request');
        // The filters: by request id, and a status that excludes it.
        await visit(page, `/dashboard/requests?id=${requestId}`);
        assert.equal((await cells(page, 'requests')).length, 1);
        await visit(page, `/dashboard/requests?id=${requestId}&status=failed`);
        assert.match((await cells(page, 'requests'))[0]![0]!, /No request matches/);
        assert.deepEqual(member.problems, []);
      } finally {
        await member.close();
      }
    });

    test('a video job’s page leads to its request, whose video plays in the page', async () => {
      const submitted = await submitVideo(gateway, { model: 'gateway/clip', prompt: 'a paper boat' });
      assert.equal(submitted.status, 200, submitted.text);
      const ended = await endedVideo(gateway, submitted.body.id);
      assert.equal(ended.body.status, 'completed', ended.text);
      await flushRequestLog(gateway);
      const member = await signedIn(MEMBER);
      try {
        const { page } = member;
        await visit(page, '/dashboard/jobs?kind=video');
        await page.getByRole('link', { name: submitted.body.id }).click();
        await assertAccessible(page);
        assert.equal(await page.getByTestId('job-status').textContent(), 'completed');
        await shoot(page, 'video-job');
        await page.getByRole('link', { name: /^req_/ }).click();
        await assertAccessible(page);
        // The job runs in steps; its row keeps the calls of the step that ended it: the look that found the video.
        assert.deepEqual((await cells(page, 'attempts')).map((row) => [row[1], row[2]]).at(-1), ['sim · sim-clip', 'served']);
        const video = page.getByTestId('video');
        await video.waitFor();
        type Player = { muted: boolean; currentTime: number; duration: number; videoWidth: number; play(): Promise<void>; pause(): void };
        const played = await video.evaluate(async (element) => {
          const player = element as unknown as Player;
          player.muted = true;
          await player.play();
          while (player.currentTime === 0) await new Promise((resolve) => setTimeout(resolve, 20));
          player.pause();
          return { duration: player.duration, width: player.videoWidth };
        });
        assert.ok(played.duration > 1.5 && played.width > 0, JSON.stringify(played));
        await shoot(page, 'video-request');
        assert.deepEqual(member.problems, []);
      } finally {
        await member.close();
      }
    });

    test('cancelling a running background response from its page releases its hold in full, and is audited', async () => {
      chat.setDefault({ kind: 'delay', ms: 20_000 });
      const before = await gateway.store.getBalance(owner);
      const queued = await call(gateway.baseUrl, 'POST', '/v1/responses', {
        key: gateway.apiKey,
        json: { model: 'gateway/background', input: 'take your time', background: true },
      });
      assert.equal(queued.status, 200, queued.text);
      const id = queued.body.id as string;
      await eventually(async () => assert.equal(chat.requests.length > 0, true, 'the job reached the upstream'));
      assert.ok((await gateway.store.getBalance(owner)).reserved > before.reserved, 'the job holds credit');
      const member = await signedIn(MEMBER);
      try {
        const { page } = member;
        await visit(page, `/dashboard/jobs/${id}`);
        assert.equal(await page.getByTestId('job-status').textContent(), 'in_progress');
        assert.equal(await page.getByTestId('hold-status').textContent(), 'open');
        await shoot(page, 'job-running');
        await page.getByRole('button', { name: 'Cancel job' }).click();
        await page.getByText('The job was cancelled and its hold released.').waitFor();
        await assertAccessible(page);
        assert.equal(await page.getByTestId('job-status').textContent(), 'cancelled');
        assert.equal(await page.getByTestId('hold-status').textContent(), 'released');
        assert.equal(await page.getByRole('button', { name: 'Cancel job' }).count(), 0, 'an ended job has no cancel button');
        assert.deepEqual(member.problems, []);
      } finally {
        await member.close();
        chat.setDefault({ kind: 'normal' });
      }
      const polled = await untilEnded(
        async () => (await call(gateway.baseUrl, 'GET', `/v1/responses/${id}`, { key: gateway.apiKey })).body,
        RESPONSE_RUNNING,
        id,
      );
      assert.equal(polled.status, 'cancelled');
      // Nothing charged, and the hold back in full. (What is reserved may also count a credit lease of the
      // instance's on PostgreSQL, taken and given back around other requests: docs/billing.md.)
      assert.equal((await gateway.store.getBalance(owner)).balance, before.balance, 'nothing was charged');
      await eventually(async () => assert.ok((await gateway.store.getBalance(owner)).reserved <= before.reserved, 'the hold went back in full'));
      const audit = (await gateway.store.listAudit({ action: 'job.cancel' }, { limit: 5 })).items;
      assert.deepEqual(
        audit.map((entry) => [entry.actor.label, entry.target?.id]),
        [[MEMBER.email, id]],
      );
    });

    test('the integrity panel: every wallet adds up, then the one changed by hand in the database is listed', async () => {
      const operator = await signedIn(OPERATOR);
      try {
        const { page } = operator;
        await visit(page, '/dashboard/health');
        assert.match((await page.getByTestId('integrity-verdict').textContent())!, /^All \d+ wallets add up/);
        assert.ok((await cells(page, 'instances')).some((row) => row[0]!.includes('(this one)')));
        // The last hour's figures come from the request rows: the image request of the first test
        // called pics-down (503) and then pics-up (served).
        const endpoints = new Map((await cells(page, 'endpoints')).map((row) => [row[0], row]));
        assert.deepEqual(endpoints.get('pics-down:gpt-image-1')?.slice(1, 4), ['closed', '1', '100 %']);
        assert.deepEqual(endpoints.get('pics-up:gpt-image-1')?.slice(1, 4), ['closed', '1', '0 %']);
        assert.match(endpoints.get('pics-up:gpt-image-1')![4]!, /^\d+ \/ \d+$/, 'latency p50 / p95');
        await shoot(page, 'health');

        // Seven pico-dollars appear in the wallet's balance with no ledger entry behind them.
        const tampered = 7n;
        if (engine === 'sqlite') {
          const database = new DatabaseSync(join(gateway.storage.dataDir, SQLITE_FILE_NAME));
          try {
            database.prepare('UPDATE wallets SET balance = balance + ? WHERE owner_kind = ? AND owner_id = ?').run(tampered, owner.kind, owner.id);
          } finally {
            database.close();
          }
        } else {
          const client = new pg.Client({ connectionString: gateway.storage.databaseUrl });
          await client.connect();
          try {
            await client.query(`UPDATE wallets SET balance = balance + $1 WHERE owner_kind = $2 AND owner_id = $3`, [
              tampered.toString(),
              owner.kind,
              owner.id,
            ]);
          } finally {
            await client.end();
          }
        }
        await visit(page, '/dashboard/health');
        assert.match((await page.getByTestId('integrity-verdict').textContent())!, /^1 of \d+ wallets do not add up/);
        const [row, ...others] = await cells(page, 'integrity');
        assert.deepEqual(others, []);
        assert.equal(row![0], `account ${owner.id}`);
        assert.equal(row![6], `-${formatUsd(tampered)} (balance off by ${formatUsd(tampered)})`);
        await shoot(page, 'health-corrupted');
        assert.deepEqual(operator.problems, []);
      } finally {
        await operator.close();
      }
    });
  });
}
