/**
 * The builds an A/B script measures: this checkout, and with `--before` another checkout of the
 * repository beside it (the build before a change), each by name and root folder.
 */
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

export function buildsToMeasure(before: string | undefined, alone = 'this build'): [name: string, root: string][] {
  return before === undefined
    ? [[alone, REPO_ROOT]]
    : [
        ['before', before],
        ['after', REPO_ROOT],
      ];
}
