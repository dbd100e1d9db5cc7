/**
 * Optional peer: the Portkey gateway (`@portkey-ai/gateway`), measured in front of the same
 * simulator when it happens to be installed. It is never installed by the benchmark; when absent,
 * the run says so and goes on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CORE_UNDER_TEST, freePort, waitForHttp, type Child, type ProcessGroup } from './processes.ts';

const PACKAGE = '@portkey-ai/gateway';

/** The package's server entry point, or a reason it cannot be used. */
export function findPortkey(repoRoot: string): { readonly entry: string } | { readonly missing: string } {
  const manifestPath = join(repoRoot, 'node_modules', ...PACKAGE.split('/'), 'package.json');
  if (!existsSync(manifestPath)) return { missing: `${PACKAGE} is not installed; peer comparison skipped` };
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) return { missing: `${PACKAGE} declares no server entry point (bin); peer comparison skipped` };
  return { entry: join(dirname(manifestPath), bin) };
}

export async function startPortkey(group: ProcessGroup, entry: string, timeoutMs: number): Promise<{ child: Child; origin: string }> {
  const port = await freePort();
  const child = group.start({
    name: 'portkey',
    nodeArgs: [entry, `--port=${port}`, '--headless'],
    core: CORE_UNDER_TEST,
    env: { NODE_ENV: 'production' },
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/`, child, timeoutMs);
  return { child, origin };
}
