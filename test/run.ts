/**
 * `npm test`: every test file (or those named: `npm test -- test/chat/*.test.ts`), each in a process
 * of its own, three per core at a time (TEST_CONCURRENCY overrides), the longest first.
 *
 * Node's `--test` runs the files in the order of their names. The longest file (a server killed at
 * every step of a metered call, on both stores: 80 s) then started after 110 s of a 220 s run, and
 * the run ended with one or two long files running alone on an idle machine. Started first, the
 * long files run beside the many short ones, and the run ends when the short ones do.
 */
import { globSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

/** The files that took over 15 s each on a 2-core machine, longest first; every other file follows them in name order. */
const LONGEST_FIRST = [
  'test/platform/lifecycle-crash.test.ts',
  'test/platform/process.test.ts',
  'test/dashboard/usage.test.ts',
  'test/dashboard/operations.test.ts',
  'test/routing/breakers-faults.test.ts',
  'test/dashboard/browser.test.ts',
  'test/videos/upstreams.test.ts',
  'test/platform/drain.test.ts',
  'test/platform/busy-wallet.test.ts',
  'test/storage/postgres.test.ts',
  'test/dashboard/sso.test.ts',
  'test/platform/cli.test.ts',
  'test/examples/examples.test.ts',
  'test/platform/crash.test.ts',
  'test/platform/jobs-crash.test.ts',
];

/**
 * Files at once. Most files wait on sockets, databases, browsers and child processes as much as
 * they compute: on a 2-core machine four at a time left the cores idle a tenth of the run, six kept
 * them busy (179 s against 195 s, the same code). At most 16, for the database connections and memory of a
 * larger machine.
 */
const CONCURRENCY = Number(process.env.TEST_CONCURRENCY ?? Math.min(availableParallelism() * 3, 16));

const patterns = process.argv.slice(2);
const files = globSync(patterns.length > 0 ? patterns : ['test/**/*.test.ts']).sort();
const missing = LONGEST_FIRST.filter((file) => patterns.length === 0 && !files.includes(file));
if (missing.length > 0) throw new Error(`test/run.ts names files that do not exist: ${missing.join(', ')}`);
const ordered = [...LONGEST_FIRST.filter((file) => files.includes(file)), ...files.filter((file) => !LONGEST_FIRST.includes(file))];

run({ files: ordered, concurrency: CONCURRENCY })
  .on('test:fail', (event) => {
    if (event.todo === undefined || event.todo === false) process.exitCode = 1;
  })
  .compose(spec)
  .pipe(process.stdout);
