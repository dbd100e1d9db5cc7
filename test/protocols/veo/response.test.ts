import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseVeoOperation, veoOperationName } from '../../../src/protocols/veo/response.ts';
import { readJsonFixture } from '../../simulators/fixtures.ts';
import { gatewayError } from '../video-helpers.ts';

const here = import.meta.dirname;
const fixture = (name: string) => parseVeoOperation(readJsonFixture(here, name));

describe('veo: operation → state', () => {
  test('not done: running', () => {
    assert.deepEqual(fixture('operation-running.json'), { status: 'running' });
    assert.deepEqual(parseVeoOperation({ name: 'models/m/operations/1', done: false }), { status: 'running' });
  });

  test('done with a sample URI: succeeded, an MP4 of undeclared duration to download', () => {
    assert.deepEqual(fixture('operation-done-uri.json'), {
      status: 'succeeded',
      file: { url: 'https://generativelanguage.googleapis.com/v1beta/files/abc123:download?alt=media', contentType: 'video/mp4' },
    });
  });

  test('done with the video inline: its bytes, with the encoding given', () => {
    assert.deepEqual(fixture('operation-done-inline.json'), {
      status: 'succeeded',
      file: { bytes: Buffer.from('AAAAEGZ0eXBpc29t', 'base64'), contentType: 'video/webm' },
    });
  });

  test('done with an error: failed, the gRPC code mapped like a Google status (INVALID_ARGUMENT: the request)', () => {
    const state = fixture('operation-error.json');
    assert.equal(state.status, 'failed');
    assert.ok(state.status === 'failed' && gatewayError('upstream_error', false, /could not be submitted/)(state.error));
    assert.equal(state.status === 'failed' && state.error.status, 400);
  });

  test('an error without a known code is an internal upstream error', () => {
    const state = parseVeoOperation({ done: true, error: { message: 'boom' } });
    assert.ok(state.status === 'failed' && gatewayError('upstream_error', true, /boom/)(state.error));
  });

  test('done with CANCELLED: cancelled upstream', () => {
    assert.deepEqual(fixture('operation-cancelled.json'), { status: 'cancelled' });
  });

  test('every sample filtered: failed, not retryable, saying so', () => {
    const state = fixture('operation-filtered.json');
    assert.ok(state.status === 'failed' && gatewayError('upstream_error', false, /content filter \(The video could not be generated/)(state.error));
  });

  test('done without a video, or with an unusable one: failed (looking again would say the same)', () => {
    for (const body of [
      { done: true, response: { generateVideoResponse: { generatedSamples: [] } } },
      { done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 'gs://bucket/video.mp4' } }] } } },
      { done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { encodedVideo: 'not base64!' } }] } } },
    ]) {
      const state = parseVeoOperation(body);
      assert.equal(state.status, 'failed', JSON.stringify(body));
    }
  });

  test('a body that is not an operation object, or with a wrong-typed field, is a retryable malformed answer', () => {
    for (const body of [
      null,
      [],
      'done',
      { done: 'true' },
      { done: true, error: { code: '1' } },
      { done: true, response: { generateVideoResponse: { generatedSamples: [{ video: { uri: 42 } }] } } },
      { done: true, response: { generateVideoResponse: { raiMediaFilteredCount: -1 } } },
      { done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1.5 } } },
    ]) {
      assert.throws(() => parseVeoOperation(body), gatewayError('upstream_error', true, /does not match its documented shape/), JSON.stringify(body));
    }
    assert.throws(() => veoOperationName({ name: 42 }), gatewayError('upstream_error', true, /does not match its documented shape/));
  });
});

describe('veo: the started operation’s name', () => {
  test('a relative resource path is kept as the operation id', () => {
    assert.equal(veoOperationName({ name: 'models/veo-3.0-generate-001/operations/abc123' }), 'models/veo-3.0-generate-001/operations/abc123');
  });

  test('a missing name, or one that would leave the API path, is refused', () => {
    for (const name of [undefined, '', '/absolute', 'models/../../files', 'a//b', 'https://elsewhere/x', 'a?b']) {
      assert.throws(() => veoOperationName({ name }), gatewayError('upstream_error', true, /without a valid name/), String(name));
    }
  });
});
