/**
 * The process settings read from the environment: what `npm start` and `gateway serve` do with
 * nothing set, the overrides, and values refused before anything starts.
 */
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from 'node:test';
import { DEFAULT_REQUEST_TIMEOUT_MS, readSettings, SettingsError } from '../../src/server/settings.ts';

describe('settings from the environment', () => {
  test('an empty environment listens on 127.0.0.1:8080 with ./data and SQLite', () => {
    const settings = readSettings({});
    assert.equal(settings.host, '127.0.0.1');
    assert.equal(settings.port, 8080);
    assert.equal(settings.dataDir, resolve('./data'));
    assert.equal(settings.databaseUrl, undefined);
    assert.equal(settings.configPath, undefined);
    assert.equal(settings.adminKey, undefined);
    assert.equal(settings.logLevel, 'info');
    assert.equal(settings.requestTimeoutMs, DEFAULT_REQUEST_TIMEOUT_MS);
  });

  test('empty or blank values count as unset', () => {
    const settings = readSettings({ HOST: ' ', PORT: '', GATEWAY_DATA_DIR: '' });
    assert.equal(settings.host, '127.0.0.1');
    assert.equal(settings.port, 8080);
    assert.equal(settings.dataDir, resolve('./data'));
  });

  test('HOST, PORT and GATEWAY_DATA_DIR override the defaults', () => {
    const settings = readSettings({ HOST: '0.0.0.0', PORT: '9123', GATEWAY_DATA_DIR: 'var/gateway' });
    assert.equal(settings.host, '0.0.0.0');
    assert.equal(settings.port, 9123);
    // Relative to the working directory, resolved once so the server and the CLI agree.
    assert.equal(settings.dataDir, resolve('var/gateway'));
    assert.equal(readSettings({ PORT: '0' }).port, 0, 'port 0 picks a free port');
  });

  test('a PORT that is not a port number is refused, naming the variable and the value', () => {
    for (const port of ['abc', '80.5', '-1', '65536', '8080x', '0x1F90', '1e3']) {
      assert.throws(
        () => readSettings({ PORT: port }),
        (error: unknown) => error instanceof SettingsError && error.message.includes('PORT') && error.message.includes(`'${port}'`),
        `PORT=${port}`,
      );
    }
  });

  test('GATEWAY_STREAM_DECODING reads text deltas through templates unless it says full; another value is refused', () => {
    assert.equal(readSettings({}).streamDecoding, 'templates');
    assert.equal(readSettings({ GATEWAY_STREAM_DECODING: 'full' }).streamDecoding, 'full');
    assert.equal(readSettings({ GATEWAY_STREAM_DECODING: 'templates' }).streamDecoding, 'templates');
    assert.throws(
      () => readSettings({ GATEWAY_STREAM_DECODING: 'fast' }),
      (error: unknown) => {
        assert.ok(error instanceof SettingsError);
        assert.match(error.message, /GATEWAY_STREAM_DECODING must be one of templates, full, got 'fast'/);
        return true;
      },
    );
  });

  test('GATEWAY_REQUEST_TIMEOUT_MS sets the request timeout; anything but a positive integer is refused', () => {
    assert.equal(readSettings({ GATEWAY_REQUEST_TIMEOUT_MS: '15000' }).requestTimeoutMs, 15_000);
    for (const value of ['0', '-1', '1.5', '10s', '1e4']) {
      assert.throws(
        () => readSettings({ GATEWAY_REQUEST_TIMEOUT_MS: value }),
        (error: unknown) => error instanceof SettingsError && error.message.includes('GATEWAY_REQUEST_TIMEOUT_MS') && error.message.includes(`'${value}'`),
        value,
      );
    }
  });

  test('the connection caps and the body budget have documented defaults; anything but a positive integer is refused', () => {
    assert.deepEqual(readSettings({}).serverLimits, { maxConnections: 10_000, maxConnectionsPerAddress: 1_000, bodyBudgetBytes: 128 * 1024 * 1024 });
    const set = readSettings({ GATEWAY_MAX_CONNECTIONS: '50', GATEWAY_MAX_CONNECTIONS_PER_ADDRESS: '5', GATEWAY_BODY_BUDGET_BYTES: '1048576' });
    assert.deepEqual(set.serverLimits, { maxConnections: 50, maxConnectionsPerAddress: 5, bodyBudgetBytes: 1_048_576 });
    for (const name of ['GATEWAY_MAX_CONNECTIONS', 'GATEWAY_MAX_CONNECTIONS_PER_ADDRESS', 'GATEWAY_BODY_BUDGET_BYTES']) {
      for (const value of ['0', '-1', '1.5', '1e4', '0x10']) {
        assert.throws(
          () => readSettings({ [name]: value }),
          (error: unknown) => error instanceof SettingsError && error.message.includes(name) && error.message.includes(`'${value}'`),
          `${name}=${value}`,
        );
      }
    }
  });

  test('GATEWAY_BLOB_DIR, GATEWAY_OUTPUT_SECRET and GATEWAY_PUBLIC_URL are read for stored outputs (docs/outputs.md)', () => {
    const unset = readSettings({});
    assert.deepEqual([unset.blobDir, unset.outputSecret, unset.publicUrl], [undefined, undefined, undefined]);
    const settings = readSettings({
      GATEWAY_BLOB_DIR: 'var/blobs',
      GATEWAY_OUTPUT_SECRET: ` ${'k'.repeat(32)} `,
      GATEWAY_PUBLIC_URL: 'https://gateway.example.com/ai/',
    });
    assert.equal(settings.blobDir, resolve('var/blobs'));
    assert.equal(settings.outputSecret, 'k'.repeat(32));
    assert.throws(
      () => readSettings({ GATEWAY_OUTPUT_SECRET: 'too-short-a-secret' }),
      (error: unknown) => error instanceof SettingsError && error.message.includes('GATEWAY_OUTPUT_SECRET') && !error.message.includes('too-short-a-secret'),
    );
    assert.equal(settings.publicUrl, 'https://gateway.example.com/ai');
    assert.equal(readSettings({ GATEWAY_PUBLIC_URL: 'http://gateway.example.com:8080' }).publicUrl, 'http://gateway.example.com:8080');
    for (const value of ['gateway.example.com', 'ftp://example.com', 'https://example.com/?a=1', 'https://user:pw@example.com', 'https://example.com/#x']) {
      assert.throws(
        () => readSettings({ GATEWAY_PUBLIC_URL: value }),
        (error: unknown) => error instanceof SettingsError && error.message.includes('GATEWAY_PUBLIC_URL'),
        value,
      );
    }
  });
});
