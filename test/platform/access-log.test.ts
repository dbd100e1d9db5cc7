/**
 * One structured access-log line per request at `info` (src/http/access-log.ts): the request's
 * method, route, status, duration and id, and for a metered call its model, endpoint, tokens and
 * cost; never the key or the prompt.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { call } from '../helpers/http.ts';

const PROMPT = 'a secret prompt about lighthouses';

describe('access log', () => {
  const lines: Record<string, unknown>[] = [];
  let gateway: TestGateway;
  before(async () => {
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    gateway = await startGateway({ logger: pino({ level: 'info', base: undefined }, sink) });
  });
  after(() => gateway.close());

  const accessLine = (requestId: string) => lines.find((line) => line.msg === 'request' && line.requestId === requestId);

  test('a chat completion: model, endpoint, tokens and cost beside the HTTP facts; no key, no prompt', async () => {
    const response = await call(gateway.baseUrl, 'POST', '/v1/chat/completions', {
      key: gateway.apiKey,
      json: { model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: PROMPT }] },
    });
    assert.equal(response.status, 200, response.text);
    const requestId = response.headers.get('x-gateway-request-id')!;
    const line = accessLine(requestId);
    assert.ok(line, 'one access line for the request');
    assert.equal(line.method, 'POST');
    assert.equal(line.route, '/v1/chat/completions');
    assert.equal(line.status, 200);
    assert.equal(line.model, 'gateway/atlas-4-5');
    assert.equal(line.endpoint, 'sim-first:sim-atlas-4-5');
    assert.equal(line.outputTokens, response.body.usage.completion_tokens);
    assert.equal(line.inputTokens, response.body.usage.prompt_tokens);
    assert.equal(line.costUsd, response.headers.get('x-gateway-cost-usd'));
    assert.ok(typeof line.durationMs === 'number');
    const text = JSON.stringify(line);
    assert.doesNotMatch(text, /lighthouses/);
    assert.ok(!text.includes(gateway.apiKey));
    assert.equal(lines.filter((other) => other.msg === 'request' && other.requestId === requestId).length, 1);
  });

  test('a request that reaches no model still gets its line', async () => {
    const response = await call(gateway.baseUrl, 'GET', '/v1/nothing-here', { key: gateway.apiKey });
    const line = accessLine(response.headers.get('x-gateway-request-id')!);
    assert.ok(line);
    assert.deepEqual([line.status, line.route, line.model], [404, null, undefined]);
  });
});
