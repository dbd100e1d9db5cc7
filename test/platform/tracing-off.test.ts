/**
 * Tracing is free when off (docs/operations.md, "Tracing"): a server started without any OTEL_*
 * exporter setting answers requests without ever loading an OpenTelemetry SDK module, while the
 * same server with an OTLP endpoint loads the SDK and exports protobuf (the protocol's default). A
 * resolve hook in the server process reports every OpenTelemetry module it loads. The API package
 * alone is no SDK: prom-client always loads it (for exemplars) and it does nothing by itself.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { call } from '../helpers/http.ts';
import { startOtlpReceiver } from '../helpers/otlp-receiver.ts';
import { startProcess } from '../helpers/processes.ts';

let workDir: string;
let hookUrl: string;

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-tracing-off-'));
  const hook = join(workDir, 'report-loads.mjs');
  await writeFile(
    hook,
    `import { registerHooks } from 'node:module';
registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (resolved.url.includes('/@opentelemetry/') && !resolved.url.includes('/@opentelemetry/api/')) process.stderr.write('module loaded: ' + resolved.url + '\\n');
    return resolved;
  },
});
`,
  );
  hookUrl = pathToFileURL(hook).href;
});
after(() => rm(workDir, { recursive: true, force: true }));

/** Runs the demo server with `env`, makes a chat request plain and streamed, stops it; returns its stderr. */
async function serveChats(env: Record<string, string>, dataDir: string): Promise<string> {
  const server = startProcess(['--import', hookUrl, 'src/main.ts'], { PORT: '0', GATEWAY_DATA_DIR: join(workDir, dataDir), ...env });
  try {
    const [, baseUrl] = await server.waitFor(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/);
    const [, key] = await server.waitFor(/^\s+(gateway_\S+)$/m);
    for (const stream of [false, true]) {
      const answer = await call(baseUrl, 'POST', '/v1/chat/completions', {
        key,
        json: { model: 'gateway/atlas-4-5', stream, messages: [{ role: 'user', content: 'hello' }] },
      });
      assert.equal(answer.status, 200, answer.text);
    }
  } finally {
    await server.stop();
  }
  const exited = await server.exited;
  return exited.stderr;
}

test('with tracing off no OpenTelemetry SDK module is loaded', async () => {
  const stderr = await serveChats({}, 'off');
  assert.doesNotMatch(stderr, /module loaded/, stderr);
});

test('OTEL_SDK_DISABLED=true keeps it off even with an endpoint', async () => {
  const stderr = await serveChats({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }, 'disabled');
  assert.doesNotMatch(stderr, /module loaded/, stderr);
});

test('with an OTLP endpoint the SDK is loaded and spans go out as protobuf', async () => {
  const receiver = await startOtlpReceiver();
  try {
    const stderr = await serveChats({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '20' }, 'on');
    assert.match(stderr, /module loaded: .*@opentelemetry\/sdk-trace/, 'the probe sees the SDK when it is loaded');
    // The server exports what is queued before it exits.
    assert.ok(receiver.protobufBodies.length > 0, 'an OTLP protobuf export arrived');
    assert.ok(
      receiver.protobufBodies.some((body) => body.includes('POST /v1/chat/completions')),
      'with the server span',
    );
  } finally {
    await receiver.close();
  }
});
