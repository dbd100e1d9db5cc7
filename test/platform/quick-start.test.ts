/**
 * The README's quick start, as a newcomer runs it: `npm start` on an empty data dir prints the demo
 * key, and the README's own requests (read from the README) succeed with it. The chat completion
 * costs exactly what `/v1/models` lists for the model, for the usage it reports.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { perMillionRateToPicosPerToken, usdToPicos } from '../../src/core/money.ts';
import { call } from '../helpers/http.ts';
import { PROJECT_ROOT, startProcess, type RunningProcess } from '../helpers/processes.ts';

const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
const [quickStartAt, examplesAt] = [readme.indexOf('## Quick start'), readme.indexOf('### Examples')];
assert.ok(quickStartAt >= 0 && examplesAt > quickStartAt, 'the README has a quick start followed by its examples');
const quickStart = readme.slice(quickStartAt, examplesAt);

/** The JSON body of the quick start's chat completion (`-d '…'`). */
function quickStartChatBody(): { model: string } {
  const body = quickStart.match(/\/v1\/chat\/completions[\s\S]*?-d '([^']+)'/)?.[1];
  assert.ok(body, 'the quick start shows a chat completion with a -d body');
  return JSON.parse(body);
}

describe('README quick start', () => {
  let dataDir: string;
  let server: RunningProcess;
  let baseUrl: string;
  let apiKey: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gateway-quick-start-'));
    // `npm start` is `node <flags> src/main.ts`, with nothing configured (a free port instead of 8080).
    server = startProcess(['src/main.ts'], { GATEWAY_DATA_DIR: dataDir, PORT: '0' });
    [, baseUrl] = await server.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
    [, apiKey] = await server.waitFor(/Its API key is shown only this once; keep it:\n\n {4}(gateway_\S+)\n/);
  });
  after(async () => {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('the models list answers with the printed key', async () => {
    assert.match(quickStart, /curl http:\/\/127\.0\.0\.1:8080\/v1\/models -H "Authorization: Bearer \$GATEWAY_API_KEY"/);
    const models = await call(baseUrl, 'GET', '/v1/models', { key: apiKey });
    assert.equal(models.status, 200, models.text);
    assert.ok(models.body.data.some((row: { id: string }) => row.id === quickStartChatBody().model));
  });

  test('the chat completion costs exactly the listed price of its usage', async () => {
    const body = quickStartChatBody();
    const listed = await call(baseUrl, 'GET', `/v1/models/${body.model}`, { key: apiKey });
    assert.equal(listed.status, 200, listed.text);
    const { input_per_1m, output_per_1m } = listed.body.pricing;

    const completion = await call(baseUrl, 'POST', '/v1/chat/completions', { key: apiKey, json: body });
    assert.equal(completion.status, 200, completion.text);
    assert.ok(completion.body.choices[0].message.content.length > 0);
    const usage = completion.body.usage;
    assert.equal(usage.prompt_tokens_details?.cached_tokens ?? 0, 0, 'no cached input to price separately');
    const expected =
      BigInt(usage.prompt_tokens) * perMillionRateToPicosPerToken(input_per_1m) +
      BigInt(usage.completion_tokens) * perMillionRateToPicosPerToken(output_per_1m);
    assert.equal(usdToPicos(completion.headers.get('x-gateway-cost-usd') ?? 'missing'), expected);
  });
});
