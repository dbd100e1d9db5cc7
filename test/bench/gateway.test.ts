import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { startCommand } from '../../bench/gateway.ts';
import { parseStartScript, readStartScript } from '../../bin/start-script.js';

describe('the benchmark runs the gateway as npm start does', () => {
  test("the start script's variables and node flags", () => {
    assert.deepEqual(startCommand(parseStartScript('MALLOC_ARENA_MAX=2 A_B=x=y node --max-semi-space-size=8 src/main.ts')), {
      env: { MALLOC_ARENA_MAX: '2', A_B: 'x=y' },
      nodeArgs: ['--max-semi-space-size=8', 'src/main.ts'],
    });
    assert.deepEqual(startCommand(parseStartScript('node src/main.ts')), { env: {}, nodeArgs: ['src/main.ts'] });
  });

  test('a start script that does not run node cannot be mirrored', () => {
    assert.throws(() => startCommand(parseStartScript('MALLOC_ARENA_MAX=2 tsx src/main.ts')), /not node/);
  });

  test("this project's start script is one it can mirror", () => {
    assert.equal(startCommand(readStartScript(fileURLToPath(new URL('../..', import.meta.url)))).nodeArgs.at(-1), 'src/main.ts');
  });
});
