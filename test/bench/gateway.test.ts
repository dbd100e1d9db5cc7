import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  test("a relative compile cache is a folder of the project, as npm runs the script in the project's folder", () => {
    const root = mkdtempSync(join(tmpdir(), 'start-script-'));
    try {
      writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { start: 'NODE_COMPILE_CACHE=.cache/compile A=b node src/main.ts' } }));
      assert.deepEqual(readStartScript(root).env, { NODE_COMPILE_CACHE: join(root, '.cache', 'compile'), A: 'b' });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
