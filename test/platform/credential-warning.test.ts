/**
 * A provider whose credential variable (`api_key_env`) is unset would start silently and fail every
 * call; the server names the variable in a warning at start.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { dump } from 'js-yaml';
import { startProcess } from '../helpers/processes.ts';

let workDir: string;
before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'gateway-credentials-'));
});
after(() => rm(workDir, { recursive: true, force: true }));

const endpoint = (provider: string) => ({
  provider,
  model: 'upstream-model',
  supply: 'first_party',
  training_use: 'never',
  pricing: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2 },
});

test('a provider whose credential variable is unset is named in a warning at start', async () => {
  const configPath = join(workDir, 'config.yaml');
  await writeFile(
    configPath,
    dump({
      providers: [
        { id: 'unkeyed', kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'UNKEYED_PROVIDER_KEY' },
        { id: 'keyed', kind: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'KEYED_PROVIDER_KEY' },
      ],
      models: [
        {
          id: 'gateway/m',
          name: 'M',
          owned_by: 'tests',
          category: 'LLM',
          type: 'chat',
          input_modalities: ['text'],
          output_modalities: ['text'],
          endpoints: [endpoint('unkeyed'), endpoint('keyed')],
        },
      ],
    }),
  );
  const server = startProcess(['src/main.ts'], {
    GATEWAY_CONFIG: configPath,
    GATEWAY_DATA_DIR: join(workDir, 'data'),
    PORT: '0',
    KEYED_PROVIDER_KEY: 'sk-test',
  });
  try {
    await server.waitFor(/"msg":"gateway listening"/);
    const warnings = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.level === 40);
    assert.deepEqual(
      warnings.map((entry) => [entry.provider, entry.variable]),
      [['unkeyed', 'UNKEYED_PROVIDER_KEY']],
    );
    assert.match(warnings[0].msg, /UNKEYED_PROVIDER_KEY is unset/);
  } finally {
    await server.stop();
  }
});
