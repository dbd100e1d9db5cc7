/**
 * The request log writer against a store that fails on demand: an unavailable store costs no row
 * (rows wait, in bounded number, and are written once it is back), a refused batch falls back to
 * single rows, and every failure and dropped row is counted and logged. The same writer against the
 * real engines is in the store contract (test/storage/contract/request-log.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import { Registry } from 'prom-client';
import { errors } from '../../src/core/errors.ts';
import { timeOrderedId } from '../../src/core/ids.ts';
import { keptRequest, MAX_HELD_ROWS, MAX_HELD_TEXT, RETRY_INTERVAL_MS, RequestLogWriter, requestLogRecord } from '../../src/pipeline/request-log.ts';
import type { RequestLogRecord, RequestLogStore } from '../../src/storage/store.ts';
import { startGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';
import { metricValue } from '../helpers/metrics.ts';
import { endpoint, flushRequestLog, model, simulatedConfig } from '../chat/helpers.ts';

type Failure = 'unavailable' | 'refused' | undefined;

const unavailable = () => errors.storageUnavailable(new Error('the store is down'));

/** A store keeping rows in memory; `fail` decides, per write, whether and how it fails. */
function scriptedStore(fail: (records: readonly RequestLogRecord[]) => Failure) {
  const written = new Map<string, RequestLogRecord>();
  const writes: number[] = [];
  const store: RequestLogStore = {
    async recordRequests(records) {
      writes.push(records.length);
      switch (fail(records)) {
        case 'unavailable':
          throw unavailable();
        case 'refused':
          throw new Error('violates check constraint');
        case undefined:
          for (const record of records) written.set(record.id, record);
          return;
      }
    },
    async getRequest(id) {
      return written.get(id) ?? null;
    },
    async usageSummary() {
      return [];
    },
    async deleteExpiredRequests() {
      return 0;
    },
  };
  return { store, written, writes };
}

function recordingLogger() {
  const entries: Array<{ level: string; message: string; details: Record<string, unknown> }> = [];
  const log = (level: string) => (details: object, message: string) => void entries.push({ level, message, details: details as Record<string, unknown> });
  return { entries, logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') } };
}

function row(marker = 'plain'): RequestLogRecord {
  return requestLogRecord({
    requestId: timeOrderedId('req'),
    owner: { kind: 'account', id: 'acct_test' },
    keyId: 'key_test',
    route: 'chat',
    stream: false,
    createdAt: 1_000,
    durationMs: 5,
    status: 'completed',
    httpStatus: 200,
    output: { marker },
  });
}

async function metrics(registry: Registry) {
  const text = await registry.metrics();
  return {
    held: metricValue(text, 'gateway_request_log_rows_held'),
    unavailable: metricValue(text, 'gateway_request_log_write_failures_total', { reason: 'unavailable' }),
    refused: metricValue(text, 'gateway_request_log_write_failures_total', { reason: 'refused' }),
    droppedRefused: metricValue(text, 'gateway_request_log_rows_dropped_total', { reason: 'refused' }),
    droppedOverflow: metricValue(text, 'gateway_request_log_rows_dropped_total', { reason: 'overflow' }),
  };
}

describe('request log writer', () => {
  test('while the store is unavailable rows wait, whole, and are written once it is back', async () => {
    let away = true;
    const { store, written, writes } = scriptedStore(() => (away ? 'unavailable' : undefined));
    const { entries, logger } = recordingLogger();
    const registry = new Registry();
    const writer = new RequestLogWriter(store, logger, registry);
    const rows = Array.from({ length: 5 }, () => row());
    for (const record of rows) writer.add(record);
    await writer.flush();
    await writer.flush();
    assert.deepEqual(writes, [5, 5], 'one write per flush: an outage is no reason to try rows one by one');
    assert.equal(written.size, 0);
    assert.deepEqual(await metrics(registry), { held: 5, unavailable: 2, refused: 0, droppedRefused: 0, droppedOverflow: 0 });
    assert.deepEqual(
      entries.map((entry) => entry.level),
      ['error'],
      'an outage is logged once, not per write',
    );

    away = false;
    await writer.flush();
    assert.deepEqual([...written.keys()].sort(), rows.map((record) => record.id).sort());
    assert.equal((await metrics(registry)).held, 0);
    assert.deepEqual(entries.map((entry) => entry.message).slice(1), ['request log writes resumed']);
  });

  test('held rows are tried again on a timer, without a flush', async () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      let away = true;
      const { store, written } = scriptedStore(() => (away ? 'unavailable' : undefined));
      const writer = new RequestLogWriter(store, recordingLogger().logger, new Registry());
      const record = row();
      writer.add(record);
      await writer.flush();
      away = false;
      mock.timers.tick(RETRY_INTERVAL_MS - 1);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(written.size, 0);
      mock.timers.tick(1);
      for (let turn = 0; turn < 10 && written.size === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
      assert.ok(written.has(record.id));
    } finally {
      mock.timers.reset();
    }
  });

  test(`at most ${MAX_HELD_ROWS} rows wait; those beyond are dropped, counted and logged`, async () => {
    let away = true;
    const { store, written } = scriptedStore(() => (away ? 'unavailable' : undefined));
    const { entries, logger } = recordingLogger();
    const registry = new Registry();
    const writer = new RequestLogWriter(store, logger, registry);
    for (let index = 0; index < MAX_HELD_ROWS + 7; index++) writer.add(row());
    await writer.flush();
    assert.deepEqual(await metrics(registry), { held: MAX_HELD_ROWS, unavailable: 1, refused: 0, droppedRefused: 0, droppedOverflow: 7 });
    const dropped = entries.find((entry) => entry.message.startsWith('request log rows dropped'));
    assert.equal(dropped?.level, 'error');
    assert.equal(dropped?.details.rows, 7);

    writer.add(row());
    assert.equal((await metrics(registry)).droppedOverflow, 8, 'still full: the new row is dropped too');
    away = false;
    await writer.flush();
    assert.equal(written.size, MAX_HELD_ROWS);
    writer.add(row());
    await writer.flush();
    assert.equal(written.size, MAX_HELD_ROWS + 1, 'room again once the store took the held rows');
  });

  test(`the rows waiting keep at most ${MAX_HELD_TEXT} characters of outputs and prompts; rows beyond keep their facts without them`, async () => {
    let away = true;
    const { store, written } = scriptedStore(() => (away ? 'unavailable' : undefined));
    const { entries, logger } = recordingLogger();
    const registry = new Registry();
    const writer = new RequestLogWriter(store, logger, registry);
    // A prompt of 1 MiB per request: the budget holds a few dozen of them.
    const prompt = 'x'.repeat(1024 * 1024);
    const rows = Array.from({ length: 80 }, () => ({ ...row(), canonicalRequest: keptRequest({ prompt }) }));
    for (const record of rows) writer.add(record);
    await writer.flush();
    const fitting = Math.floor(MAX_HELD_TEXT / keptRequest({ prompt }).text.length);
    assert.equal(metricValue(await registry.metrics(), 'gateway_request_log_outputs_left_out_total'), rows.length - fitting);
    assert.equal(entries.find((entry) => entry.message.startsWith('request log rows kept without their output'))?.details.rows, rows.length - fitting);
    away = false;
    await writer.flush();
    assert.equal(written.size, rows.length, 'every row is written, its facts whole');
    assert.ok(rows.slice(0, fitting).every((record) => written.get(record.id)?.canonicalRequest !== null));
    assert.ok(rows.slice(fitting).every((record) => written.get(record.id)?.canonicalRequest === null && written.get(record.id)?.cost === record.cost));
    // Written, their text leaves the budget: the next rows keep theirs.
    const next = { ...row(), canonicalRequest: keptRequest({ prompt }) };
    writer.add(next);
    await writer.flush();
    assert.notEqual(written.get(next.id)?.canonicalRequest, null);
  });

  test('a refused batch is written row by row; rows after an outage found meanwhile wait instead', async () => {
    let away = false;
    let poisonAlone = 0;
    const poison = row('poison');
    const { store, written, writes } = scriptedStore((records) => {
      if (away) return 'unavailable';
      if (records.includes(poison)) {
        // The store goes away right after refusing the poisoned row on its own the first time.
        if (records.length === 1 && ++poisonAlone === 1) away = true;
        return 'refused';
      }
      return undefined;
    });
    const registry = new Registry();
    const writer = new RequestLogWriter(store, recordingLogger().logger, registry);
    const before = row();
    const after = [row(), row()];
    for (const record of [before, poison, ...after]) writer.add(record);
    await writer.flush();
    assert.deepEqual(writes, [4, 1, 1, 1], 'the batch, then single rows until the store is found away');
    assert.deepEqual([...written.keys()], [before.id]);
    assert.deepEqual(await metrics(registry), { held: 3, unavailable: 1, refused: 2, droppedRefused: 0, droppedOverflow: 0 });

    away = false;
    await writer.flush();
    assert.deepEqual(writes.slice(4), [1, 2], 'the refused row alone, the others as a batch');
    assert.deepEqual([...written.keys()].sort(), [before.id, ...after.map((record) => record.id)].sort());
    assert.equal((await metrics(registry)).held, 1, 'the refused row has a try left');
  });
});

describe('request log failures over HTTP', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  before(async () => {
    gateway = await startGateway({ config: simulatedConfig([model('gateway/echo', [endpoint('sim-echo')])]) });
  });
  after(() => gateway.close());

  const metricsText = async () => (await call(gateway.baseUrl, 'GET', '/metrics')).text;

  test('a request whose row cannot be written is still served; /metrics shows the row held, then written', async () => {
    const text = await metricsText();
    assert.equal(metricValue(text, 'gateway_request_log_rows_held'), 0);
    assert.equal(metricValue(text, 'gateway_request_log_rows_dropped_total', { reason: 'overflow' }), 0);

    const away = mock.method(gateway.store, 'recordRequests', async () => {
      throw unavailable();
    });
    let requestId: string | null;
    try {
      const response = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
        key: gateway.apiKey,
        json: { model: 'gateway/echo', messages: [{ role: 'user', content: 'keep me' }] },
      });
      assert.equal(response.status, 200);
      requestId = response.headers.get('x-gateway-request-id');
      await flushRequestLog(gateway);
      const failing = await metricsText();
      assert.equal(metricValue(failing, 'gateway_request_log_rows_held'), 1);
      assert.ok(metricValue(failing, 'gateway_request_log_write_failures_total', { reason: 'unavailable' }) >= 1);
    } finally {
      away.mock.restore();
    }
    await flushRequestLog(gateway);
    assert.ok(await gateway.store.getRequest(requestId!), 'the held row is written once the store is back');
    assert.equal(metricValue(await metricsText(), 'gateway_request_log_rows_held'), 0);
  });
});

describe('the canonical request kept with the output', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>>;
  before(async () => {
    gateway = await startGateway({ config: simulatedConfig([model('gateway/echo', [endpoint('sim-echo')])]) });
  });
  after(() => gateway.close());

  const chat = async (extra: Record<string, unknown>) => {
    const response = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      json: { model: 'gateway/echo', messages: [{ role: 'user', content: 'remember the lighthouse' }], ...extra },
    });
    assert.equal(response.status, 200, response.text);
    await flushRequestLog(gateway);
    return (await gateway.store.getRequest(response.headers.get('x-gateway-request-id')!))!;
  };

  test('kept, without any key, when the output is; neither with store: false', async () => {
    const kept = await chat({});
    const text = JSON.stringify(kept.canonicalRequest);
    assert.match(text, /remember the lighthouse/);
    assert.ok(!text.includes(gateway.apiKey), 'no key is kept');
    assert.notEqual(kept.output, null);
    const unkept = await chat({ store: false });
    assert.equal(unkept.canonicalRequest, null);
    assert.equal(unkept.output, null);
  });

  test('input file bytes are kept as their size', () => {
    const kept = keptRequest({ prompt: 'edit', images: [{ data: new Uint8Array(3), mediaType: 'image/png' }] });
    assert.deepEqual(JSON.parse(kept.text), { prompt: 'edit', images: [{ data: { bytes: 3 }, mediaType: 'image/png' }] });
    // A kind that says its requests hold no bytes still gets their size if one does.
    assert.equal(keptRequest({ prompt: 'edit', images: [{ data: new Uint8Array(3), mediaType: 'image/png' }] }, false).text, kept.text);
    assert.equal(keptRequest({ prompt: 'plain', n: 2 }, false).text, '{"prompt":"plain","n":2}');
  });
});
