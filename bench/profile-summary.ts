/**
 * Summarizes a V8 CPU profile (`node --cpu-prof`, e.g. from `npm run bench -- --cpu-prof=DIR`):
 * the functions and the modules with the most self time. Usage:
 * `node bench/profile-summary.ts <file.cpuprofile> [--top=25]`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** A module name that reads well: the package for dependencies, the repository path for our code. */
export function moduleOf(url: string): string {
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return url;
  const packagePath = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packagePath !== null) return packagePath[1];
  const ours = /\/((?:src|bench)\/.*)$/.exec(url);
  return ours === null ? url : ours[1];
}

/** V8 files samples under these names when the program is not running JavaScript or native work. */
const NOT_WORK = new Set(['(idle)', '(program)']);

export function summarizeProfile(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const functions = new Map<string, number>();
  const modules = new Map<string, number>();
  let total = 0;
  let busy = 0;
  for (const [id, micros] of selfMicros) {
    total += micros;
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined || NOT_WORK.has(frame.functionName)) continue;
    busy += micros;
    const module = moduleOf(frame.url);
    const name = `${frame.functionName || '(anonymous)'}  ${module}${frame.url === '' ? '' : `:${frame.lineNumber + 1}`}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
    modules.set(module, (modules.get(module) ?? 0) + micros);
  }
  // Shares are of busy time: an idle event loop between the benchmark's phases says nothing.
  const lines = (title: string, entries: Map<string, number>) => [
    title,
    ...[...entries]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, micros]) => `  ${((micros / busy) * 100).toFixed(1).padStart(5)} %  ${(micros / 1000).toFixed(0).padStart(7)} ms  ${name}`),
  ];
  return [
    `sampled ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms (shares below are of busy time)`,
    ...lines('self time by module', modules),
    '',
    ...lines('self time by function', functions),
  ].join('\n');
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '25' } }, allowPositionals: true });
  if (positionals.length !== 1) throw new Error('usage: node bench/profile-summary.ts <file.cpuprofile> [--top=25]');
  const profile = JSON.parse(readFileSync(positionals[0], 'utf8')) as CpuProfile;
  console.log(summarizeProfile(profile, Number(values.top)));
}
