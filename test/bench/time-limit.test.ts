/**
 * A benchmark run that reaches its time limit (bench/run.ts): it stops the processes it started and
 * still reports what it measured until then, naming the part it stopped in. The limit is set so short
 * that the run cannot get past its first parts; which part that is depends on the machine, so the test
 * reads it from the note rather than naming it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { BenchResults } from '../../bench/results.ts';

const RUN = fileURLToPath(new URL('../../bench/run.ts', import.meta.url));

test('a run stopped at its time limit reports what it measured and where it stopped', async () => {
  const resultsDir = mkdtempSync(join(tmpdir(), 'bench-limit-'));
  try {
    // 0.02 minutes: 1.2 s, reached while the processes start (a run of the chat workload alone takes about 10 s).
    const run = spawn(process.execPath, [RUN, '--quick', '--no-pin', '--only=chat', '--time-limit=0.02', `--results-dir=${resultsDir}`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    run.stdout.on('data', (chunk: Buffer) => (output += chunk));
    run.stderr.on('data', (chunk: Buffer) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
    assert.equal(code, 1, output);
    assert.match(output, /bench: exceeded its time limit of 0\.02 minutes; stopping every process/);
    const results = JSON.parse(readFileSync(join(resultsDir, 'latest.json'), 'utf8')) as BenchResults;
    const stopped = results.notes.find((note) => note.startsWith('stopped: exceeded its time limit of 0.02 minutes during '));
    assert.ok(stopped, `notes: ${results.notes.join(' | ')}`);
    assert.match(output, /^Gateway benchmark \(quick\)/m, 'the report is printed');
    assert.ok(output.includes(`note: ${stopped}`), 'the report says where the run stopped');
    assert.match(output, /^Bars$/m, 'with the bars, each met, not met or not measured');
  } finally {
    rmSync(resultsDir, { recursive: true, force: true });
  }
});
