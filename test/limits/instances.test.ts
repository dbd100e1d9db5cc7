/**
 * Limits exact across instances: two gateway processes on one PostgreSQL schema and one Redis
 * (a random key prefix, deleted afterwards). A key limited to N requests per minute gets exactly N
 * under a burst spread over both; a spend cap is never passed under 200 concurrent requests over
 * both; 500 concurrent requests of an account with little credit never overdraw it (the ledger
 * stays exact); a limit lowered through one instance is enforced by the other.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { usdToPicos } from '../../src/core/money.ts';
import { endpoint, eventually, model, simulatedConfig } from '../chat/helpers.ts';
import { assertError, call, type JsonResponse } from '../helpers/http.ts';
import {
  ADMIN_KEY,
  assertLedgerExact,
  type Instances,
  type LedgerTotals,
  LEDGER_TOTALS_SQL,
  ledgerTotals,
  type Server,
  shownBalance,
  startInstances,
} from '../helpers/servers.ts';

const config = simulatedConfig([model('gateway/limited', [endpoint('sim-limited')])]);
const chat = { model: 'gateway/limited', max_tokens: 100, messages: [{ role: 'user', content: 'Count me.' }] };

let instances: Instances;
let servers: readonly Server[] = [];
let database: Instances['database'];

before(async () => {
  instances = await startInstances('test_limits', config, 2);
  ({ servers, database } = instances);
});

after(() => instances?.stop());

const admin = (server: Server, method: string, path: string, json?: unknown) => call(server.baseUrl, method, `/admin/v1${path}`, { key: ADMIN_KEY, json });

async function account(name: string, creditUsd: string): Promise<string> {
  const id = (await admin(servers[0], 'POST', '/accounts', { name })).body.id as string;
  await admin(servers[0], 'POST', `/accounts/${id}/credit`, { amount_usd: creditUsd });
  return id;
}

async function key(accountId: string, limits?: object): Promise<{ id: string; key: string }> {
  const issued = await admin(servers[0], 'POST', '/keys', { account_id: accountId, limits });
  assert.equal(issued.status, 200, issued.text);
  return issued.body;
}

/** `count` requests at once, alternating between the two instances. */
function burst(count: number, send: (server: Server) => Promise<JsonResponse>): Promise<JsonResponse[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => send(servers[index % 2])));
}

/** How many answers were a 503 `storage_unavailable` (see chatAsClient). */
let storageUnavailable = 0;

/**
 * A chat request sent as the SDKs send it: a retryable 503 `storage_unavailable` (an instance that
 * waited too long for a database connection, as 250 requests at once on a busy machine can) is sent
 * again after a moment, a few times at most. A hold taken before such an answer may stay open until
 * its expiry: the instance could not reach its database to close it.
 */
async function chatAsClient(server: Server, key: string): Promise<JsonResponse> {
  for (let attempt = 1; ; attempt++) {
    const answer = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, json: chat });
    if (answer.status !== 503 || answer.body?.error?.code !== 'storage_unavailable' || attempt === 5) return answer;
    storageUnavailable += 1;
    await sleep(200 * attempt);
  }
}

/** Nothing is held once a burst is over, unless an instance could not reach its database (above). */
function assertNothingHeld(totals: LedgerTotals): void {
  if (storageUnavailable === 0) assert.equal(totals.reserved, 0n);
}

async function ledgerOf(accountId: string) {
  return ledgerTotals((await database.admin.query(LEDGER_TOTALS_SQL('$1'), [accountId])).rows[0]);
}

describe('limits across two instances (PostgreSQL and Redis)', () => {
  test('requests per minute: a burst of 60 over both instances gets exactly 10', async () => {
    const limited = await key(await account('rpm', '5'), { requests_per_minute: 10 });
    const startedAt = Date.now();
    const answers = await burst(60, (server) => call(server.baseUrl, 'GET', '/v1/models', { key: limited.key }));
    // GCRA frees one request every 6 s of a limit of 10 a minute (docs/limits.md): a burst that a
    // busy machine spreads over more than that may be admitted one more for each 6 s it took.
    const refilled = Math.floor((Date.now() - startedAt) / 6_000);
    const admitted = answers.filter((answer) => answer.status === 200).length;
    // The count is shared: an instance each counting its own would admit 20.
    assert.ok(admitted >= 10 && admitted <= 10 + refilled, `${admitted} admitted in a burst over ${refilled} refills`);
    for (const answer of answers.filter((answer) => answer.status !== 200)) {
      assertError(answer, { status: 429, type: 'rate_limit_error', code: 'requests_per_minute_exceeded' });
    }
  });

  test('a spend cap is never passed by 200 concurrent requests over both instances', async () => {
    const accountId = await account('spend', '5');
    const cap = '0.002';
    const capped = await key(accountId, { spend_limit_usd: cap });
    const answers = await burst(200, (server) => chatAsClient(server, capped.key));
    const admitted = answers.filter((answer) => answer.status === 200);
    assert.ok(admitted.length > 0);
    for (const answer of answers.filter((answer) => answer.status !== 200)) {
      assertError(answer, { status: 429, type: 'rate_limit_error', code: 'spend_limit_exceeded' });
    }
    const { rows } = await database.admin.query(`SELECT coalesce(sum(amount), 0) AS spent FROM ledger_entries WHERE key_id = $1 AND kind = 'charge'`, [
      capped.id,
    ]);
    const spent = BigInt(rows[0].spent);
    assert.ok(spent <= usdToPicos(cap), `spent ${spent} of ${usdToPicos(cap)}`);
    const costs = admitted.reduce((total, answer) => total + usdToPicos(answer.headers.get('x-gateway-cost-usd')!), 0n);
    assert.equal(spent, costs, 'the charges are exactly the admitted answers’ costs');
    const totals = await ledgerOf(accountId);
    assertLedgerExact(totals, await shownBalance(servers[1], accountId));
    assertNothingHeld(totals);
  });

  test('500 concurrent requests of an account with little credit never overdraw it', async () => {
    // Each hold is the worst case (about 0.00021 USD): 0.004 USD covers about 19 at once.
    const accountId = await account('poor', '0.004');
    const poor = await key(accountId);
    const answers = await burst(500, (server) => chatAsClient(server, poor.key));
    const admitted = answers.filter((answer) => answer.status === 200);
    assert.ok(admitted.length > 0);
    for (const answer of answers.filter((answer) => answer.status !== 200)) {
      assertError(answer, { status: 402, type: 'insufficient_quota_error', code: 'insufficient_quota' });
    }
    const totals = await ledgerOf(accountId);
    assertLedgerExact(totals, await shownBalance(servers[0], accountId));
    assertNothingHeld(totals);
    assert.ok(totals.balance >= 0n);
    assert.equal(totals.credits - totals.charges, totals.balance);
    assert.equal(
      totals.charges,
      admitted.reduce((total, answer) => total + usdToPicos(answer.headers.get('x-gateway-cost-usd')!), 0n),
    );
    assert.equal(totals.chargeCount, BigInt(admitted.length));
  });

  test('a limit lowered through one instance is enforced by the other', async () => {
    const changing = await key(await account('lowered', '5'), { requests_per_minute: 1000 });
    const other = servers[1];
    for (let i = 0; i < 3; i++) assert.equal((await call(other.baseUrl, 'GET', '/v1/models', { key: changing.key })).status, 200);
    const patched = await admin(servers[0], 'PATCH', `/keys/${changing.id}`, { limits: { requests_per_minute: 2 } });
    assert.equal(patched.status, 200, patched.text);
    // The other instance learns of the change through the change feed, polled every 500 ms.
    const answer = await eventually(async () => {
      const refused = await call(other.baseUrl, 'GET', '/v1/models', { key: changing.key });
      assert.notEqual(refused.status, 200);
      return refused;
    });
    assertError(answer, { status: 429, type: 'rate_limit_error', code: 'requests_per_minute_exceeded' });
    assert.equal(answer.headers.get('x-ratelimit-limit-requests'), null);
    const admitted = await call(servers[0].baseUrl, 'GET', '/v1/models', { key: changing.key });
    assert.equal(admitted.status, 429, 'the first instance enforces it too');
  });
});
