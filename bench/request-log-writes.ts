/**
 * What writing the request log costs on the embedded store, per row (docs/performance.md, "A
 * savepoint journal, the usage rollups and the tokenizer's table"): batches of 20 rows of one
 * account, key and model (a busy key, as the request log writer flushes them under load) written
 * through the store, group commit and rollups included, in a fresh process per build and round.
 * With `--before`, a checkout of another build is measured in the same rounds, in an order that
 * turns every round; the CPU of the whole process over the rows written is what is compared.
 * `node bench/request-log-writes.ts [--before=<another checkout>] [--rounds=6] [--batches=1500]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildsToMeasure, REPO_ROOT } from './builds.ts';
import { median } from './stats.ts';

const BATCH_ROWS = 20;
const WARM_UP_BATCHES = 300;

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '6' },
    batches: { type: 'string', default: '1500' },
    // Internal: the process that measures one build.
    measure: { type: 'string' },
  },
});

/** Writes the batches through the store of the build at `root`; prints the µs of CPU per row. */
async function measure(root: string, batches: number): Promise<void> {
  const { openStore } = (await import(join(root, 'src/storage/open-store.ts'))) as typeof import('../src/storage/open-store.ts');
  const { requestLogRecord } = (await import(join(root, 'src/pipeline/request-log.ts'))) as typeof import('../src/pipeline/request-log.ts');
  const { timeOrderedId } = (await import(join(root, 'src/core/ids.ts'))) as typeof import('../src/core/ids.ts');
  const dataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-request-log-'));
  try {
    const store = await openStore({ dataDir });
    const account = await store.createAccount({ name: 'busy' });
    const owner = { kind: 'account', id: account.id } as const;
    const output = { id: 'chatcmpl-bench', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(20) } }] };
    const row = () =>
      requestLogRecord({
        requestId: timeOrderedId('req'),
        owner,
        keyId: 'key_busy',
        route: 'chat.completions',
        stream: false,
        createdAt: Date.now(),
        durationMs: 1,
        modelId: 'bench',
        status: 'completed',
        httpStatus: 200,
        cost: 12_345_678n,
        output,
      });
    const batch = () => Array.from({ length: BATCH_ROWS }, row);
    for (let index = 0; index < WARM_UP_BATCHES; index++) await store.recordRequests(batch());
    const prepared = Array.from({ length: batches }, batch);
    const before = process.cpuUsage();
    for (const rows of prepared) await store.recordRequests(rows);
    await store.close();
    const used = process.cpuUsage(before);
    console.log(JSON.stringify({ microsPerRow: (used.user + used.system) / (batches * BATCH_ROWS) }));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (values.measure !== undefined) {
  await measure(values.measure, Number(values.batches));
} else {
  const builds = buildsToMeasure(values.before, 'this build');
  const figures = new Map<string, number[]>(builds.map(([name]) => [name, []]));
  for (let round = 0; round < Number(values.rounds); round++) {
    const line: string[] = [];
    for (let turn = 0; turn < builds.length; turn++) {
      const [name, root] = builds[(turn + round) % builds.length]!;
      const out = execFileSync(process.execPath, [join(REPO_ROOT, 'bench/request-log-writes.ts'), `--measure=${root}`, `--batches=${values.batches}`], {
        encoding: 'utf8',
      });
      const { microsPerRow } = JSON.parse(out.trim().split('\n').at(-1)!) as { microsPerRow: number };
      figures.get(name)!.push(microsPerRow);
      line.push(`${name} ${microsPerRow.toFixed(1)} µs`);
    }
    console.log(`round ${round + 1}: ${line.join(', ')}`);
  }
  console.log(`CPU per request log row written, medians: ${builds.map(([name]) => `${name} ${median(figures.get(name)!).toFixed(1)} µs`).join(', ')}`);
}
