/**
 * The cost of password hashes (docs/dashboard.md, "Users and sign-in"): new hashes carry the
 * configured scrypt parameters, hashes made with others keep verifying, and the config refuses a
 * cost below libsodium's interactive baseline.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, DEMO_CONFIG_PATH, loadConfigFile, validateConfig } from '../../src/config/load.ts';
import { DEFAULT_PASSWORD_HASHING, hashPassword, passwordHashingOf, verifyPassword } from '../../src/people/passwords.ts';

const PASSWORD = 'a long enough password';

test('a hash carries the parameters it was made with, and verifies whatever the current ones', async () => {
  const least = await hashPassword(PASSWORD, { n: 16_384, p: 1 });
  const standard = await hashPassword(PASSWORD, DEFAULT_PASSWORD_HASHING);
  assert.match(least, /^scrypt\$16384\$8\$1\$/);
  assert.match(standard, /^scrypt\$32768\$8\$3\$/);
  assert.equal(await verifyPassword(PASSWORD, standard), true);
  assert.equal(await verifyPassword(PASSWORD, least), true);
  assert.equal(await verifyPassword(`${PASSWORD}!`, least), false);
});

test("the default cost is OWASP's, and the config may not go below N = 2^14, p = 1", () => {
  const demo = loadConfigFile(DEMO_CONFIG_PATH);
  assert.deepEqual(passwordHashingOf(demo), { n: 32_768, p: 3 });
  const withHashing = (password_hashing: unknown) => validateConfig({ ...structuredClone(demo), dashboard: { password_hashing } });
  assert.deepEqual(passwordHashingOf(withHashing({ n: 16_384, p: 1 })), { n: 16_384, p: 1 });
  const refusedAt = (path: string) => (error: unknown) => error instanceof ConfigError && error.path === path;
  assert.throws(() => withHashing({ n: 8_192, p: 1 }), refusedAt('/dashboard/password_hashing/n'));
  assert.throws(() => withHashing({ n: 16_384, p: 0 }), refusedAt('/dashboard/password_hashing/p'));
  assert.throws(() => withHashing({ n: 20_000, p: 1 }), refusedAt('/dashboard/password_hashing/n'));
});
