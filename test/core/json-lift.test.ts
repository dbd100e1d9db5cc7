/** JSON with some members' values lifted out of the parse: the same values as JSON.parse, always. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { liftedJson } from '../../src/core/json-lift.ts';

/** The parsed value with every placeholder replaced by its raw bytes read as UTF-8: JSON.parse's value, since a lifted value holds no escape. */
function restored(text: string, names: readonly string[] = ['b64_json']): unknown {
  const json = liftedJson(Buffer.from(text), names);
  return JSON.parse(JSON.stringify(json.value), (_key, parsed: unknown) =>
    typeof parsed === 'string' ? (json.lifted(parsed)?.toString('utf8') ?? parsed) : parsed,
  );
}

function liftedCount(text: string): number {
  const json = liftedJson(Buffer.from(text), ['b64_json']);
  return JSON.stringify(json.value).split('"\\u0000').length - 1;
}

test('a named member whose string holds no escape is lifted; everything else parses as JSON.parse parses it', () => {
  const image = randomBytes(3000).toString('base64');
  const answer = {
    created: 1,
    data: [{ b64_json: image, revised_prompt: 'a "b64_json": "not a member" \\ é' }, { b64_json: 'QUJD' }, { url: 'https://x/b64_json' }],
    usage: { input_tokens: 5, nested: { b64_json: 'QQ==' } },
  };
  for (const text of [JSON.stringify(answer), JSON.stringify(answer, null, 2), JSON.stringify(answer, null, '\t').replaceAll('\n', '\r\n')]) {
    assert.deepEqual(restored(text), answer);
    assert.equal(liftedCount(text), 3);
  }
  const json = liftedJson(Buffer.from(JSON.stringify(answer)), ['b64_json']);
  const data = (json.value as { data: { b64_json: string }[] }).data;
  assert.notEqual(data[0].b64_json, image, 'the value was not parsed');
  assert.equal(json.lifted(data[0].b64_json)?.toString('latin1'), image);
  assert.equal(json.lifted('QUJD'), undefined, 'only placeholders name a lifted value');
  assert.equal(json.lifted('\u00009'), undefined);
});

test('a value with an escape, a member named with one, or a value not a string is parsed, not lifted', () => {
  for (const text of [
    '{"b64_json":"QU\\/D"}',
    '{"b64\\u005fjson":"QUJD"}',
    '{"b64_json":42}',
    '{"b64_json":null,"x":"\\\\"}',
    '["b64_json","QUJD"]',
    '{"k":"\\"b64_json\\":\\"QUJD\\""}',
  ]) {
    assert.deepEqual(restored(text), JSON.parse(text), text);
    assert.equal(liftedCount(text), 0, text);
  }
  // Escaped quotes and backslashes before and between lifted values keep the scan in step.
  const text = '{"a":"x\\\\","b":"\\"","b64_json":"QUJD","c":"\\\\\\"b64_json\\":","d":[{"b64_json":"QQ=="}]}';
  assert.deepEqual(restored(text), JSON.parse(text));
  assert.equal(liftedCount(text), 2);
});

test('a string that reads as a placeholder keeps every value in the parse, so that it can never stand for another', () => {
  const text = JSON.stringify({ data: [{ b64_json: 'QUJD' }, { b64_json: '\u00000' }], note: '\u0000' });
  const json = liftedJson(Buffer.from(text), ['b64_json']);
  assert.deepEqual(json.value, JSON.parse(text));
  assert.equal(json.lifted('\u00000'), undefined);
});

test('a body that is not JSON throws as JSON.parse does, lifted values or not', () => {
  for (const text of ['{"b64_json":"QUJD"', '{"b64_json":"QUJD}', '{"b64_json":"QUJD",}', '{"b64_json":"QU\\"', '', '{"b64_json" "QUJD"}', 'nul']) {
    assert.throws(() => liftedJson(Buffer.from(text), ['b64_json']), SyntaxError, text);
  }
});

test('random JSON round-trips through the lift as through JSON.parse', () => {
  const pieces = ['b64_json', 'x', '"', '\\', 'é', '\u0000', '\n', ' ', 'QUJD', ':', ','];
  const randomString = () => Array.from({ length: Math.floor(Math.random() * 6) }, () => pieces[Math.floor(Math.random() * pieces.length)]).join('');
  const randomValue = (depth: number): unknown => {
    const kind = Math.floor(Math.random() * (depth > 2 ? 3 : 5));
    if (kind === 0) return randomString();
    if (kind === 1) return Math.random() < 0.5 ? null : Math.floor(Math.random() * 100);
    if (kind === 2) return Math.random() < 0.5 ? 'QUJD' : randomBytes(30).toString('base64');
    if (kind === 3) return Array.from({ length: Math.floor(Math.random() * 4) }, () => randomValue(depth + 1));
    return Object.fromEntries(
      Array.from({ length: Math.floor(Math.random() * 4) }, () => [Math.random() < 0.5 ? 'b64_json' : randomString(), randomValue(depth + 1)]),
    );
  };
  for (let round = 0; round < 2000; round++) {
    const value = randomValue(0);
    const text = JSON.stringify(value, null, Math.random() < 0.5 ? 0 : 1);
    assert.deepEqual(restored(text), JSON.parse(text), text);
  }
});
