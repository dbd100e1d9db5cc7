/**
 * The folder layout shows the pipeline (docs/architecture.md): the import graph between the folders
 * of src/ has no cycle, and the layering rules that keep translators pure hold. Read from the source
 * text, so a new import that breaks a rule fails here before review.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORT = /(?:^|\s)(?:import|export)\s[^'";]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry.name) ? [path] : [];
  });
}

/** The top-level folder of src/ a file belongs to ('.' for files directly in src/). */
const folderOf = (path: string): string => {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? parts[0] : '.';
};

/** folder → folder → the file-level imports behind that edge. */
function folderGraph(): Map<string, Map<string, string[]>> {
  const graph = new Map<string, Map<string, string[]>>();
  for (const file of sourceFiles(SRC)) {
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = resolve(dirname(file), match[1] ?? match[2]);
      const from = folderOf(file);
      const to = folderOf(target);
      if (from === to) continue;
      const edges = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, edges);
      edges.set(to, [...(edges.get(to) ?? []), `${relative(SRC, file)} → ${relative(SRC, target)}`]);
    }
  }
  return graph;
}

/** Strongly connected components with more than one folder (Tarjan's algorithm). */
function cycles(graph: ReadonlyMap<string, ReadonlyMap<string, unknown>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const graph = folderGraph();
const importsOf = (from: string, to: string): string[] => graph.get(from)?.get(to) ?? [];

describe('the import graph of src/', () => {
  test('has no cycle between folders', () => {
    const found = cycles(graph);
    const detail = found.map((component) => component.flatMap((from) => component.flatMap((to) => importsOf(from, to))).join('\n  '));
    assert.deepEqual(found, [], `folder cycles:\n  ${detail.join('\n\n  ')}`);
  });

  test('the pipeline imports nothing from the HTTP server or the route plumbing', () => {
    assert.deepEqual([...importsOf('pipeline', 'server'), ...importsOf('pipeline', 'http'), ...importsOf('pipeline', 'dialects')], []);
  });

  test('protocols know nothing of dialects, billing or the pipeline', () => {
    assert.deepEqual([...importsOf('protocols', 'dialects'), ...importsOf('protocols', 'billing'), ...importsOf('protocols', 'pipeline')], []);
  });

  test('dialects reach upstreams only through the pipeline', () => {
    assert.deepEqual([...importsOf('dialects', 'protocols'), ...importsOf('dialects', 'billing'), ...importsOf('dialects', 'storage')], []);
  });

  test('the cycle finder finds a cycle', () => {
    const looped = new Map([
      ['a', new Map([['b', []]])],
      ['b', new Map([['c', []]])],
      ['c', new Map([['a', []]])],
      ['d', new Map([['a', []]])],
    ]);
    assert.deepEqual(cycles(looped), [['a', 'b', 'c']]);
  });
});
