/**
 * The gateway's `cache` option → Anthropic prompt-caching breakpoints (docs/chat-completions.md).
 *
 * - Absent: the client's own `cache_control` blocks pass through unchanged (they are the client's).
 * - `off`: every breakpoint is removed, the client's included — the explicit request-level option
 *   wins over per-block hints.
 * - `on` (or a `cache_ttl` given alone): breakpoints `{type:"ephemeral", ttl}` are added, most
 *   useful first, until the API's limit of four is reached counting the client's own:
 *   1. the last content block of the last user turn — the cache prefix then covers tools, system
 *      and the whole conversation so far;
 *   2. the last system block — a prefix shared by every conversation with the same instructions;
 *   3. the last tool — a prefix shared by every request with the same tool set.
 *   A block that already has a breakpoint keeps the client's.
 * @see https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
 */
import type { CacheOptions } from '../../canonical/index.ts';
import type { AnthropicCacheControl, AnthropicRequestBody } from './wire.ts';

/** The API rejects a request with more breakpoints than this. */
const MAX_BREAKPOINTS = 4;

type Cacheable = { cache_control?: AnthropicCacheControl };

/** Applies the option to a freshly built body (mutated in place: nobody else holds it yet). */
export function applyCacheOption(body: AnthropicRequestBody, cache: CacheOptions | undefined): void {
  if (cache === undefined || (cache.mode === undefined && cache.ttl === undefined)) return;
  const blocks = cacheableBlocks(body);
  if (cache.mode === 'off') {
    for (const block of blocks.all) delete block.cache_control;
    return;
  }
  const control: AnthropicCacheControl = { type: 'ephemeral', ...(cache.ttl !== undefined && { ttl: cache.ttl }) };
  let used = blocks.all.filter((block) => block.cache_control !== undefined).length;
  for (const block of [blocks.lastUser, blocks.lastSystem, blocks.lastTool]) {
    if (used >= MAX_BREAKPOINTS) return;
    if (block === undefined || block.cache_control !== undefined) continue;
    block.cache_control = { ...control };
    used++;
  }
}

function cacheableBlocks(body: AnthropicRequestBody) {
  const all: Cacheable[] = [...(body.tools ?? []), ...(body.system ?? [])];
  for (const message of body.messages) {
    for (const block of message.content) {
      // Thinking and tool_use blocks cannot carry a breakpoint.
      if (block.type === 'text' || block.type === 'image' || block.type === 'document' || block.type === 'tool_result') all.push(block);
    }
  }
  const lastUserTurn = body.messages.findLast((message) => message.role === 'user');
  return {
    all,
    lastUser: lastUserTurn?.content.at(-1) as Cacheable | undefined,
    lastSystem: body.system?.at(-1),
    lastTool: body.tools?.at(-1),
  };
}
