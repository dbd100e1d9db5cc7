/**
 * The `webhooks:` keys of the config file: validated like the rest, filled with defaults that
 * docs/webhooks.md ("Configuration") states as the code has them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ConfigError, DEMO_CONFIG_PATH, loadConfigFile, validateConfig } from '../../src/config/load.ts';
import { WEBHOOK_DEFAULTS, webhookSettings } from '../../src/webhooks/settings.ts';

const demo = loadConfigFile(DEMO_CONFIG_PATH);
const withWebhooks = (webhooks: unknown) => validateConfig({ ...structuredClone(demo), webhooks });

function assertConfigError(webhooks: unknown, path: string, message: RegExp): void {
  assert.throws(
    () => withWebhooks(webhooks),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.path, path);
      assert.match(error.message, message);
      return true;
    },
  );
}

test('every key is optional; left out, each takes its default', () => {
  assert.deepEqual(webhookSettings(demo), {
    allowPrivateAddresses: false,
    timeoutMs: 10_000,
    concurrency: 8,
    pollIntervalMs: 1_000,
    retryBaseMs: 10_000,
    retryMaxMs: 3_600_000,
  });
  const set = withWebhooks({ allow_private_addresses: true, timeout_ms: 500, concurrency: 2, poll_interval_ms: 50, retry_base_ms: 5, retry_max_ms: 40 });
  assert.deepEqual(webhookSettings(set), { allowPrivateAddresses: true, timeoutMs: 500, concurrency: 2, pollIntervalMs: 50, retryBaseMs: 5, retryMaxMs: 40 });
  assert.equal(webhookSettings(withWebhooks({ retry_base_ms: 7_200_000 })).retryMaxMs, 7_200_000, 'a base above the default cap raises the cap');
});

test('an unknown key, a wrong type or a cap below the base stops the start with the path of the field', () => {
  assertConfigError({ allow_private: true }, '/webhooks/allow_private', /unknown field/);
  assertConfigError({ allow_private_addresses: 'yes' }, '/webhooks/allow_private_addresses', /boolean/);
  assertConfigError({ timeout_ms: 0 }, '/webhooks/timeout_ms', />= 1/);
  assertConfigError({ concurrency: 1.5 }, '/webhooks/concurrency', /integer/);
  assertConfigError({ retry_base_ms: 1_000, retry_max_ms: 999 }, '/webhooks/retry_max_ms', /at least retry_base_ms \(1000\)/);
});

test('docs/webhooks.md states the defaults the code has, for every key', () => {
  const markdown = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');
  const section = markdown.slice(markdown.indexOf('## Configuration'));
  const rows = [...section.matchAll(/^\| `(\w+)` \| `([^`]+)` \|/gm)].map(([, key, value]) => [key, JSON.parse(value)]);
  assert.deepEqual(Object.fromEntries(rows), WEBHOOK_DEFAULTS);
});
