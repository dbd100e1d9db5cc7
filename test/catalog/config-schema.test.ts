/**
 * The checks that the config loader leaves out at start (src/config/load.ts compiles its validator
 * without Ajv's check against the meta-schema), and how it reports a file that is not YAML.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import { ConfigError, parseConfig } from '../../src/config/load.ts';
import { GatewayConfig } from '../../src/config/schema.ts';

test('the config schema is a valid JSON Schema', () => {
  const ajv = new Ajv({ strict: false });
  assert.equal(ajv.validateSchema(GatewayConfig), true, ajv.errorsText(ajv.errors));
});

test('a file that is not YAML is refused with the line of the fault', () => {
  assert.throws(
    () => parseConfig('providers:\n  - id: a\n    kind: openai\nmodels: [1, 2\n'),
    (error: unknown) => error instanceof ConfigError && error.path === '' && /^\/: invalid YAML \(line \d+\): /.test(error.message),
  );
});

test('a key written twice in one mapping is refused, not silently replaced', () => {
  assert.throws(
    () => parseConfig('providers: []\nmodels: []\nmodels: []\n'),
    (error: unknown) => error instanceof ConfigError && /invalid YAML \(line 3\)/.test(error.message),
  );
});
