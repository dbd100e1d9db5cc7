/**
 * How deeply a parsed JSON value nests. Deep nesting is cheap to send and dear to process: every
 * recursive walk of a body (JSON.stringify when a background request is stored, schema compilers,
 * canonical translators) overflows the stack somewhere past a few thousand levels. One bound for
 * every body, checked once after parsing, keeps all of them safe. The walk is iterative and stops
 * at the first level past the bound.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests arrays and objects deeper than `maxDepth` levels (a scalar is level 0). */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ readonly node: unknown; readonly depth: number }> = [{ node: value, depth: 0 }];
  let next: { readonly node: unknown; readonly depth: number } | undefined;
  while ((next = stack.pop())) {
    const { node, depth } = next;
    if (typeof node !== 'object' || node === null) continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}
