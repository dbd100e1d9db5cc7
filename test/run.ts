/**
 * `npm test`: every test file, in a few processes rather than one per file. Loading the gateway's
 * code takes a process about a second of CPU, and code that has run a while runs faster (V8 has
 * compiled it), so most files share a process: they are dealt into one group per core, each group
 * run file after file in one process (`--test-isolation=none`). The files that need a process of
 * their own (OWN_PROCESS_SIGNS) keep one each, run beside those groups a few at a time as before.
 *
 * Arguments are passed to every `node --test` (`npm test -- --test-name-pattern=…`). Each group's
 * report is printed when the group ends, then the totals; the exit code is 1 when any group failed.
 */
import { spawn } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * What keeps a file out of the shared processes. Hooks at a file's top level belong to the
 * process's root test: in a shared process they would run only when the whole group ends, keeping
 * the file's servers (and browser) open meanwhile. Files that start servers as processes, or a
 * browser, mostly wait on them, which a process of their own does beside the shared ones.
 */
const OWN_PROCESS_SIGNS = [
  /^(?:before|after|beforeEach|afterEach)\(/m,
  /\bbrowserForTests\(/,
  /\b(?:startServer|startInstances|startProcess|runProcess)\(/,
  // Counting what the heap still holds walks the whole heap: a shared process's is many times larger.
  /\bqueryObjects\(/,
];

/** The own-process files that take longest, started first so that none of them starts last. */
const LONGEST = ['test/platform/lifecycle-crash.test.ts', 'test/platform/process.test.ts', 'test/platform/drain.test.ts', 'test/platform/jobs-crash.test.ts'];

/** Own-process files run this many at a time, as `npm test` ran every file before. */
const OWN_PROCESS_CONCURRENCY = 4;

interface Group {
  readonly name: string;
  readonly args: readonly string[];
  readonly files: readonly string[];
}

function groups(): Group[] {
  const all = globSync('test/**/*.test.ts', { cwd: ROOT }).sort();
  const texts = new Map(all.map((file) => [file, readFileSync(`${ROOT}/${file}`, 'utf8')]));
  const own = all.filter((file) => OWN_PROCESS_SIGNS.some((sign) => sign.test(texts.get(file)!)));
  for (const file of LONGEST) if (!own.includes(file)) throw new Error(`test/run.ts: ${file} is not a file of its own process`);
  const rank = (file: string) => (LONGEST.includes(file) ? LONGEST.indexOf(file) : LONGEST.length);
  own.sort((a, b) => rank(a) - rank(b));
  const shared = all.filter((file) => !own.includes(file));
  // Dealt by size, the largest first into the lightest group: a file's size is a fair guess at its work.
  const count = Math.max(1, Math.min(availableParallelism(), shared.length));
  const dealt = Array.from({ length: count }, () => ({ files: [] as string[], bytes: 0 }));
  const sizes = new Map(shared.map((file) => [file, texts.get(file)!.length]));
  for (const file of [...shared].sort((a, b) => sizes.get(b)! - sizes.get(a)!)) {
    const lightest = dealt.reduce((least, group) => (group.bytes < least.bytes ? group : least));
    lightest.files.push(file);
    lightest.bytes += sizes.get(file)!;
  }
  return [
    { name: 'own processes', args: [`--test-concurrency=${OWN_PROCESS_CONCURRENCY}`], files: own },
    ...dealt.map((group, index) => ({ name: `shared process ${index + 1}/${count}`, args: ['--test-isolation=none'], files: group.files.sort() })),
  ];
}

interface Finished {
  readonly group: Group;
  readonly code: number | null;
  readonly output: string;
  readonly seconds: number;
}

function run(group: Group, extra: readonly string[]): Promise<Finished> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--test', '--test-reporter=spec', ...group.args, ...extra, ...group.files], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return new Promise((resolve) => {
    child.on('close', (code) => {
      children.delete(child);
      resolve({ group, code, output, seconds: (performance.now() - started) / 1000 });
    });
  });
}

const children = new Set<ReturnType<typeof spawn>>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exitCode = 1;
  });
}

const COUNTED = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo'] as const;
const totals = Object.fromEntries(COUNTED.map((name) => [name, 0])) as Record<(typeof COUNTED)[number], number>;
const started = performance.now();
let failed = false;
await Promise.all(
  groups().map(async (group) => {
    const finished = await run(group, process.argv.slice(2));
    process.stdout.write(`\n# ${group.name}: ${group.files.length} files, ${finished.seconds.toFixed(0)} s\n${finished.output}`);
    for (const name of COUNTED) totals[name] += Number(finished.output.match(new RegExp(`^ℹ ${name} (\\d+)$`, 'm'))?.[1] ?? 0);
    if (finished.code !== 0) {
      failed = true;
      process.stdout.write(`# ${group.name} failed (exit code ${finished.code})\n`);
    }
  }),
);
process.stdout.write(`\n# all: ${COUNTED.map((name) => `${name} ${totals[name]}`).join(', ')}; ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
if (failed) process.exitCode = 1;
