import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { ContractContext } from './context.ts';

const NOW = 10_000_000;

function claim(overrides: { bodyHash?: string; now?: number; lockedUntil?: number; expiresAt?: number } = {}) {
  const now = overrides.now ?? NOW;
  return {
    route: 'chat',
    idempotencyKey: 'retry-me',
    bodyHash: overrides.bodyHash ?? 'hash-a',
    now,
    lockedUntil: overrides.lockedUntil ?? now + 60_000,
    expiresAt: overrides.expiresAt ?? now + 86_400_000,
  };
}

/** A key id of its own per test, so tests never see each other's records. */
const newKeyId = () => `key_${randomBytes(8).toString('hex')}`;

export function idempotencyContract({ store, peer }: ContractContext): void {
  describe('idempotency', () => {
    test('in progress, body mismatch, replay', async () => {
      const keyId = newKeyId();
      const name = { keyId, route: 'chat', idempotencyKey: 'retry-me' };
      assert.deepEqual(await store().beginIdempotent({ keyId, ...claim() }), { state: 'started' });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim() }), { state: 'in_progress' });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim({ bodyHash: 'hash-b' }) }), { state: 'body_mismatch' });

      const headers = { 'content-type': 'application/json', 'x-request-id': 'req_1' };
      await store().completeIdempotent({ ...name, status: 200, headers, body: '{"ok":true}' });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim() }), {
        state: 'replay',
        status: 200,
        headers,
        body: '{"ok":true}',
      });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim({ bodyHash: 'hash-b' }) }), { state: 'body_mismatch' });
      assert.deepEqual(
        await store().beginIdempotent({ keyId, ...claim({ now: NOW + 120_000 }) }),
        { state: 'replay', status: 200, headers, body: '{"ok":true}' },
        'a completed record is not re-claimed when its lock time passes',
      );
    });

    test('the same key on another route or API key is another record', async () => {
      const keyId = newKeyId();
      assert.deepEqual(await store().beginIdempotent({ keyId, ...claim() }), { state: 'started' });
      assert.deepEqual(await store().beginIdempotent({ keyId, ...claim(), route: 'messages' }), { state: 'started' });
      assert.deepEqual(await store().beginIdempotent({ keyId: newKeyId(), ...claim() }), { state: 'started' });
    });

    test('a success without a replayable body is reported as such', async () => {
      const keyId = newKeyId();
      await store().beginIdempotent({ keyId, ...claim() });
      await store().completeIdempotent({ keyId, route: 'chat', idempotencyKey: 'retry-me', status: 200, headers: {}, body: null });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim() }), { state: 'not_replayable' });
    });

    test('an abandoned claim frees the key for any body', async () => {
      const keyId = newKeyId();
      await store().beginIdempotent({ keyId, ...claim() });
      await store().abandonIdempotent({ keyId, route: 'chat', idempotencyKey: 'retry-me' });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim({ bodyHash: 'hash-b' }) }), { state: 'started' });
    });

    test('a claim whose lock passed may be claimed again; completing it then counts', async () => {
      const keyId = newKeyId();
      await store().beginIdempotent({ keyId, ...claim({ lockedUntil: NOW + 1_000 }) });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim({ now: NOW + 1_000 }) }), { state: 'in_progress' });
      assert.deepEqual(await peer().beginIdempotent({ keyId, ...claim({ now: NOW + 1_001 }) }), { state: 'started' });
      await peer().completeIdempotent({ keyId, route: 'chat', idempotencyKey: 'retry-me', status: 201, headers: {}, body: 'done' });
      assert.deepEqual(await store().beginIdempotent({ keyId, ...claim({ now: NOW + 2_000 }) }), {
        state: 'replay',
        status: 201,
        headers: {},
        body: 'done',
      });
    });

    test('an expired record is replaced by a new claim, and deleted by deleteExpiredIdempotency', async () => {
      const keyId = newKeyId();
      await store().beginIdempotent({ keyId, ...claim({ expiresAt: NOW + 5_000 }) });
      await store().completeIdempotent({ keyId, route: 'chat', idempotencyKey: 'retry-me', status: 200, headers: {}, body: 'old' });
      assert.deepEqual(await store().beginIdempotent({ keyId, ...claim({ bodyHash: 'hash-b', now: NOW + 5_001 }) }), { state: 'started' });
      assert.deepEqual(await store().beginIdempotent({ keyId, ...claim({ bodyHash: 'hash-b', now: NOW + 5_002 }) }), {
        state: 'in_progress',
      });

      await store().deleteExpiredIdempotency(NOW);
      const other = newKeyId();
      await store().beginIdempotent({ keyId: other, ...claim({ expiresAt: NOW + 100 }) });
      await store().beginIdempotent({ keyId: other, ...claim({ expiresAt: NOW + 100 }), idempotencyKey: 'second' });
      await store().beginIdempotent({ keyId: other, ...claim({ expiresAt: NOW + 200 }), idempotencyKey: 'third' });
      assert.equal(await store().deleteExpiredIdempotency(NOW + 150), 2);
      assert.deepEqual(await store().beginIdempotent({ keyId: other, ...claim({ expiresAt: NOW + 200 }), idempotencyKey: 'third' }), {
        state: 'in_progress',
      });
    });

    test('of many concurrent first requests exactly one starts', async () => {
      const keyId = newKeyId();
      const outcomes = await Promise.all(Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? store() : peer()).beginIdempotent({ keyId, ...claim() })));
      assert.equal(outcomes.filter((outcome) => outcome.state === 'started').length, 1);
      assert.equal(outcomes.filter((outcome) => outcome.state === 'in_progress').length, 39);
    });
  });
}
