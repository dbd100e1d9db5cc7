/**
 * When tracing is on, from the standard OTEL_* variables (src/telemetry/settings.ts): on with an
 * OTLP endpoint or `OTEL_TRACES_EXPORTER=otlp`, off by default, with `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`; a setting the gateway cannot honour stops the start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readSettings, SettingsError } from '../../src/server/settings.ts';
import { tracingSettings } from '../../src/telemetry/settings.ts';

test('off by default and when disabled', () => {
  assert.equal(tracingSettings({}), undefined);
  assert.equal(tracingSettings({ OTEL_SERVICE_NAME: 'gateway' }), undefined, 'a service name alone turns nothing on');
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }), undefined);
  assert.equal(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }), undefined);
});

test('on with an endpoint or the otlp exporter, protobuf unless JSON is asked for', () => {
  assert.deepEqual(tracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), { protocol: 'http/protobuf' });
  assert.deepEqual(tracingSettings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }), { protocol: 'http/protobuf' });
  assert.deepEqual(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp' }), { protocol: 'http/protobuf' });
  assert.deepEqual(tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }), { protocol: 'http/json' });
  assert.deepEqual(
    tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }),
    { protocol: 'http/json' },
    'the traces setting wins over the general one',
  );
});

test('an exporter or protocol the gateway does not ship is a settings error at start', () => {
  assert.throws(() => readSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }), SettingsError);
  assert.throws(
    () => readSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    /http\/protobuf, http\/json/,
  );
});
