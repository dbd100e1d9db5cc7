/**
 * Which model serves a request: resolution by id or alias, the key's allowed models, consent,
 * the `models` fallback list (walked before any reservation), 402 when the worst case cannot
 * be reserved, and whose credit an organization's key spends.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { formatUsd, usdToPicos } from '../../src/core/money.ts';
import type { OwnerRef } from '../../src/storage/store.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertError, call } from '../helpers/http.ts';
import { ledger } from './helpers.ts';

const user = [{ role: 'user', content: 'hello' }];

describe('model resolution and fallback models', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  const post = (body: Record<string, unknown>, key = gateway.apiKey) =>
    call(gateway.app, 'POST', '/v1/chat/completions', { key, json: { messages: user, ...body } });
  const notFound = async (body: Record<string, unknown>, key?: string) =>
    assertError(await post(body, key), { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' });

  test('unknown models, image models and models hidden by consent are 404 model_not_found', async () => {
    await notFound({ model: 'gateway/nope' });
    await notFound({ model: 'gateway/prism-image-2' });
    await notFound({ model: 'gateway/ember-3-1-8b' });
    await notFound({ model: 'gateway/meridian-2' });
  });

  test('a model outside the key’s allowed list behaves as unknown', async () => {
    const key = await gateway.createKey({ allowedModels: ['gateway/quill-1-free'] });
    await notFound({ model: 'gateway/atlas-4-5' }, key);
    assert.equal((await post({ model: 'quill-free' }, key)).status, 200);
  });

  test('fallback models: an unknown or unsuitable model gives way to the next one', async () => {
    const unknownFirst = await post({ model: 'gateway/nope', models: ['gateway/quill-1-free'] });
    assert.equal(unknownFirst.status, 200);
    assert.equal(unknownFirst.body.model, 'gateway/quill-1-free');
    // Lumen rejects temperature (sampling false); Atlas accepts it.
    const unsuitable = await post({ model: 'gateway/lumen-3-reasoning', temperature: 0.2, models: ['gateway/atlas-4-5'] });
    assert.equal(unsuitable.status, 200);
    assert.equal(unsuitable.body.model, 'gateway/atlas-4-5');
  });

  test('when no candidate can serve, the first candidate’s error is returned', async () => {
    // Lumen rejects temperature, the second is unknown, Quill has no tool use.
    const none = await post({
      model: 'gateway/lumen-3-reasoning',
      temperature: 0.2,
      tools: [{ type: 'function', function: { name: 'f' } }],
      models: ['gateway/nope', 'gateway/quill-1-free'],
    });
    assertError(none, { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'temperature' });
    await notFound({ model: 'gateway/nope', models: ['gateway/also-nope'] });
  });

  test('a route that cannot serve is dropped while another route of the model can', async () => {
    // Atlas's EU route caps temperature at 1 and lists no `none` effort; the other routes take both.
    const response = await post({ model: 'gateway/atlas-4-5', temperature: 1.8, reasoning_effort: 'none', provider: { sort: 'latency' } });
    assert.equal(response.status, 200, response.text);
  });
});

describe('insufficient credit', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway({ creditUsd: '0.0001' });
  });
  after(() => gateway.close());

  test('402 insufficient_quota_error when the worst case cannot be reserved; nothing moves', async () => {
    const snapshot = await ledger(gateway);
    const response = await call(gateway.app, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      json: { model: 'gateway/atlas-4-5', messages: user },
    });
    assertError(response, { status: 402, type: 'insufficient_quota_error', code: 'insufficient_quota' });
    assert.deepEqual(await ledger(gateway), snapshot);
  });

  test('a request whose worst case fits is served', async () => {
    const response = await call(gateway.app, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      // About 8 prompt tokens at the dearest input rate of the three routes plus one output token.
      json: { model: 'gateway/atlas-4-5', messages: user, max_tokens: 1 },
    });
    assert.equal(response.status, 200, response.text);
  });

  test('a free model needs no credit', async () => {
    const response = await call(gateway.app, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { model: 'quill-free', messages: user } });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-gateway-cost-usd'), '0');
  });
});

describe('organization keys spend the organization’s credit', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startGateway();
  });
  after(() => gateway.close());

  /** An organization with `creditUsd` and a member account with 50 USD of its own, and a key of the organization. */
  async function organizationWithMember(creditUsd: string) {
    const organization = await gateway.store.createOrganization({ name: 'org' });
    const owner: OwnerRef = { kind: 'organization', id: organization.id };
    const account = await gateway.store.createAccount({ name: 'member', organizationId: organization.id });
    const member: OwnerRef = { kind: 'account', id: account.id };
    if (creditUsd !== '0') await gateway.store.addCredit(owner, usdToPicos(creditUsd), 'test credit');
    await gateway.store.addCredit(member, usdToPicos('50'), 'test credit');
    return { owner, member, key: await gateway.createKey({ owner }) };
  }
  const entries = (owner: OwnerRef) => gateway.store.listEntries(owner);
  const chat = (key: string) =>
    call(gateway.app, 'POST', '/v1/chat/completions', { key, json: { model: 'gateway/atlas-4-5', messages: user, max_tokens: 16 } });

  test('a completion is charged to the organization, not to its member account', async () => {
    const { owner, member, key } = await organizationWithMember('10');
    const organizationBefore = await gateway.store.getBalance(owner);
    const memberBefore = { balance: await gateway.store.getBalance(member), entries: await entries(member) };
    const testAccountBefore = await ledger(gateway);

    const response = await chat(key);
    assert.equal(response.status, 200, response.text);
    const charges = (await entries(owner)).filter((entry) => entry.kind === 'charge');
    assert.equal(charges.length, 1);
    assert.ok(charges[0].amount > 0n);
    assert.equal(formatUsd(charges[0].amount), response.headers.get('x-gateway-cost-usd'));
    assert.equal(charges[0].requestId, response.headers.get('x-gateway-request-id'));
    const organizationAfter = await gateway.store.getBalance(owner);
    assert.equal(organizationBefore.balance - organizationAfter.balance, charges[0].amount);
    assert.equal(organizationAfter.reserved, 0n);
    assert.deepEqual({ balance: await gateway.store.getBalance(member), entries: await entries(member) }, memberBefore);
    assert.deepEqual(await ledger(gateway), testAccountBefore);
  });

  test('an organization without credit gets 402 although its member account has credit', async () => {
    const { owner, member, key } = await organizationWithMember('0');
    const organizationBefore = await entries(owner);
    const memberBefore = await gateway.store.getBalance(member);
    assert.equal(memberBefore.available, usdToPicos('50'));
    assertError(await chat(key), { status: 402, type: 'insufficient_quota_error', code: 'insufficient_quota' });
    assert.deepEqual(await entries(owner), organizationBefore);
    assert.deepEqual(await gateway.store.getBalance(member), memberBefore);
  });
});

describe('consent', () => {
  test('community-only models are served once the owner enabled community supply', async () => {
    const gateway = await startGateway({ consent: { communitySupply: true, trainingUse: true } });
    try {
      for (const model of ['gateway/ember-3-1-8b', 'gateway/meridian-2']) {
        const response = await call(gateway.app, 'POST', '/v1/chat/completions', { key: gateway.apiKey, json: { model, messages: user } });
        assert.equal(response.status, 200, response.text);
      }
    } finally {
      await gateway.close();
    }
  });
});
