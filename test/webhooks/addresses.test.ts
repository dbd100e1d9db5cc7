/**
 * The address rule of webhook URLs (src/webhooks/addresses.ts): which addresses are public, the
 * check at registration, and the checked lookup every delivery connection goes through.
 */
import assert from 'node:assert/strict';
import type { LookupAddress } from 'node:dns';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/core/errors.ts';
import { checkedLookup, checkWebhookUrl, isPublicAddress, literalAddress, refusedLiteral, type Resolver } from '../../src/webhooks/addresses.ts';

const NON_PUBLIC = [
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '10.255.255.255',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.255.0.9',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.8',
  '192.0.2.10',
  '192.168.1.1',
  '198.18.0.1',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  '::',
  '::1',
  '0:0:0:0:0:0:0:1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:10.1.2.3',
  '::ffff:169.254.169.254',
  '::127.0.0.1',
  '64:ff9b::a00:1',
  '2001:db8::1',
  '2001::1',
  '2002:7f00:1::1',
  'fc00::1',
  'fd12:3456:789a::1',
  'fe80::1',
  'febf::1',
  'fec0::1',
  'ff02::1',
];

const PUBLIC = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.216.34',
  '100.128.0.1',
  '172.32.0.1',
  '192.169.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
];

/** A resolver that answers from a table (a host missing from it does not resolve). */
function resolverOf(table: Record<string, string[]>): Resolver {
  return async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

async function assertRefused(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof GatewayError);
    assert.equal(error.status, 400);
    assert.equal(error.code, 'invalid_value');
    assert.equal(error.param, 'url');
    assert.match(error.message, message);
    return true;
  });
}

describe('public addresses', () => {
  test('loopback, private, link-local, unique-local, CGNAT, unspecified, multicast, reserved and mapped forms are not public', () => {
    for (const address of NON_PUBLIC) assert.equal(isPublicAddress(address), false, address);
  });

  test('addresses on the internet are', () => {
    for (const address of PUBLIC) assert.equal(isPublicAddress(address), true, address);
  });

  test('text that is no address is not public', () => {
    for (const text of ['localhost', '', '1.2.3', '[::1]', '127.0.0.1.nip.io']) assert.equal(isPublicAddress(text), false, text);
  });

  test('a URL host written as an address is recognised in every spelling the URL parser accepts', () => {
    for (const [url, address] of [
      ['http://127.0.0.1/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://2130706433/', '127.0.0.1'],
      ['http://[::1]:8080/', '::1'],
      ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ] as const) {
      const parsed = new URL(url);
      assert.equal(literalAddress(parsed.hostname), address, url);
      assert.ok(refusedLiteral(parsed), url);
    }
    assert.equal(literalAddress('hooks.example.com'), null);
    assert.equal(refusedLiteral(new URL('https://hooks.example.com/')), null, 'a name is checked when it is looked up');
    assert.equal(refusedLiteral(new URL('https://8.8.8.8/')), null);
  });
});

describe('registration', () => {
  const resolve = resolverOf({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'inside.example.com': ['10.0.0.5'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
  });
  const strict = { allowPrivateAddresses: false, resolve };

  test('an http or https URL on public addresses is accepted, as the URL parser writes it', async () => {
    assert.equal(await checkWebhookUrl('https://hooks.example.com/in?x=1', 'url', strict), 'https://hooks.example.com/in?x=1');
    assert.equal(await checkWebhookUrl('HTTP://HOOKS.example.com', 'url', strict), 'http://hooks.example.com/');
    assert.equal(await checkWebhookUrl('https://8.8.8.8:8443/hook', 'url', strict), 'https://8.8.8.8:8443/hook');
  });

  test('a host that is or resolves to a non-public address is refused, naming the address', async () => {
    await assertRefused(checkWebhookUrl('http://127.0.0.1:9000/', 'url', strict), /'127\.0\.0\.1' is 127\.0\.0\.1, which is not a public address/);
    await assertRefused(checkWebhookUrl('http://[::ffff:127.0.0.1]/', 'url', strict), /is ::ffff:7f00:1/);
    await assertRefused(checkWebhookUrl('http://[fd00::1]/', 'url', strict), /not a public address/);
    await assertRefused(checkWebhookUrl('http://169.254.169.254/latest/meta-data', 'url', strict), /not a public address/);
    await assertRefused(checkWebhookUrl('https://inside.example.com/', 'url', strict), /'inside\.example\.com' resolves to 10\.0\.0\.5/);
    await assertRefused(checkWebhookUrl('https://mixed.example.com/', 'url', strict), /resolves to 127\.0\.0\.1/);
    await assertRefused(checkWebhookUrl('https://inside.example.com/', 'url', strict), /webhooks\.allow_private_addresses/);
  });

  test('the system resolver: localhost is refused', async () => {
    await assertRefused(checkWebhookUrl('http://localhost:8080/hook', 'url', { allowPrivateAddresses: false }), /'localhost' resolves to/);
  });

  test('a host that does not resolve, another scheme, credentials or no URL at all is refused', async () => {
    await assertRefused(checkWebhookUrl('https://nowhere.example.com/', 'url', strict), /could not be resolved/);
    await assertRefused(checkWebhookUrl('ftp://hooks.example.com/', 'url', strict), /http or https/);
    await assertRefused(checkWebhookUrl('file:///etc/passwd', 'url', strict), /http or https/);
    await assertRefused(checkWebhookUrl('https://user:secret@hooks.example.com/', 'url', strict), /credentials/);
    await assertRefused(checkWebhookUrl('hooks.example.com/in', 'url', strict), /absolute http or https URL/);
  });

  test('allow_private_addresses lets any host through, unresolved', async () => {
    const open = { allowPrivateAddresses: true, resolve };
    assert.equal(await checkWebhookUrl('http://127.0.0.1:9000/', 'url', open), 'http://127.0.0.1:9000/');
    assert.equal(await checkWebhookUrl('https://nowhere.example.com/', 'url', open), 'https://nowhere.example.com/');
    await assertRefused(checkWebhookUrl('ftp://127.0.0.1/', 'url', open), /http or https/);
  });
});

describe('the lookup of delivery connections', () => {
  const lookup = checkedLookup(
    resolverOf({
      'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
      'rebound.example.com': ['127.0.0.1'],
    }),
  );
  const call = (hostname: string, options: object) =>
    new Promise<{ error: Error | null; address: unknown; family?: number }>((resolve) =>
      lookup(hostname, options, (error, address, family) => resolve({ error, address, family })),
    );

  test('answers with the public addresses it checked, in the form asked for', async () => {
    assert.deepEqual(await call('hooks.example.com', {}), { error: null, address: '93.184.216.34', family: 4 });
    assert.deepEqual(await call('hooks.example.com', { family: 6 }), { error: null, address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 });
    const all = await call('hooks.example.com', { all: true });
    assert.equal(all.error, null);
    assert.deepEqual(all.address, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
  });

  test('refuses a host that resolves to a non-public address, and passes resolution failures on', async () => {
    const refused = await call('rebound.example.com', { all: true });
    assert.match(refused.error?.message ?? '', /'rebound\.example\.com' resolves to 127\.0\.0\.1, which is not a public address/);
    const missing = await call('nowhere.example.com', {});
    assert.equal((missing.error as NodeJS.ErrnoException | null)?.code, 'ENOTFOUND');
  });
});
