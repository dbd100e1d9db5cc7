/**
 * Which methods a path answers to, so that an unknown method on a known path is a 405 with an
 * `Allow` header rather than a 404. Fastify's own lookups compare route patterns, not paths, so
 * each registered pattern is kept here as a regular expression.
 */
export class MethodIndex {
  readonly #routes: { readonly pattern: RegExp; readonly methods: Set<string> }[] = [];
  readonly #byUrl = new Map<string, Set<string>>();

  add(url: string, method: string | string[]): void {
    let methods = this.#byUrl.get(url);
    if (!methods) {
      methods = new Set();
      this.#byUrl.set(url, methods);
      this.#routes.push({ pattern: patternFor(url), methods });
    }
    for (const one of Array.isArray(method) ? method : [method]) methods.add(one.toUpperCase());
  }

  /** Methods registered for any route matching the path; empty when the path is unknown. */
  allowedFor(path: string): string[] {
    const allowed = new Set<string>();
    for (const route of this.#routes) {
      if (route.pattern.test(path)) for (const method of route.methods) allowed.add(method);
    }
    return [...allowed].sort();
  }
}

/** `/v1/responses/:id/cancel` → /^\/v1\/responses\/[^/]+\/cancel$/, and `*` matches the rest. */
function patternFor(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      if (segment.startsWith(':')) return '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}
