/**
 * `npm test`: every test file (or those named: `npm test -- test/chat/*.test.ts`), each in a process
 * of its own, three per core at a time (TEST_CONCURRENCY overrides), the longest first; then the
 * files of the streaming dialects and their upstreams a second time, every stream decoded in full.
 *
 * Node's `--test` runs the files in the order of their names. The longest file (a server killed at
 * every step of a metered call, on both stores: 80 s) then started after 110 s of a 220 s run, and
 * the run ended with one or two long files running alone on an idle machine. Started first, the
 * long files run beside the many short ones, and the run ends when the short ones do.
 */
import { globSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import { finished } from 'node:stream/promises';
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

/**
 * The files whose gateways stream from OpenAI chat and Anthropic upstreams, their fixtures and the
 * recorded provider traffic. Their text deltas are read through templates (src/protocols/delta-template.ts)
 * unless GATEWAY_STREAM_DECODING is `full`; the second pass runs them that way, so that both ways
 * pass the same tests. An environment that sets the variable already gets one pass, its own.
 */
const BOTH_DECODINGS = [
  'test/chat/**',
  'test/messages/**',
  'test/responses/**',
  'test/clients/**',
  'test/pipeline/**',
  'test/billing/**',
  'test/protocols/openai-chat/**',
  'test/protocols/anthropic/**',
  'test/protocols/transport/**',
  'test/routing/**',
  'test/security/fuzz-upstreams.test.ts',
];

const patterns = process.argv.slice(2);
const files = globSync(patterns.length > 0 ? patterns : ['test/**/*.test.ts']).sort();
const missing = LONGEST_FIRST.filter((file) => patterns.length === 0 && !files.includes(file));
if (missing.length > 0) throw new Error(`test/run.ts names files that do not exist: ${missing.join(', ')}`);
const ordered = [...LONGEST_FIRST.filter((file) => files.includes(file)), ...files.filter((file) => !LONGEST_FIRST.includes(file))];

/** Runs `files` with the spec reporter, and fails `npm test` on a failure. */
async function runFiles(files: readonly string[], env: NodeJS.ProcessEnv): Promise<void> {
  const stream = run({ files: [...files], concurrency: CONCURRENCY, env })
    .on('test:fail', (event) => {
      if (event.todo === undefined || event.todo === false) process.exitCode = 1;
    })
    .compose(spec);
  stream.pipe(process.stdout, { end: false });
  await finished(stream);
}

await runFiles(ordered, process.env);
const secondPass = process.env.GATEWAY_STREAM_DECODING === undefined ? ordered.filter((file) => BOTH_DECODINGS.some((glob) => matchesGlob(file, glob))) : [];
if (secondPass.length > 0) {
  const files = secondPass.length === 1 ? 'file' : 'files';
  console.log(`\nThe ${secondPass.length} ${files} of streaming dialects and upstreams again, every stream decoded in full (GATEWAY_STREAM_DECODING=full):\n`);
  await runFiles(secondPass, { ...process.env, GATEWAY_STREAM_DECODING: 'full' });
}
