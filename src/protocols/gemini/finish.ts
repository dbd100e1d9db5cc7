/**
 * Gemini `finishReason` → canonical (docs/protocols.md), the raw value kept beside it. A turn that
 * calls functions still reports STOP, so tool calls are read from the parts; a prompt blocked before
 * any candidate reports its `promptFeedback.blockReason` instead.
 */
import type { Finish } from '../../canonical/index.ts';

/** The safety family: the output was withheld or cut by a filter. */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);
/** The model failed to produce a usable turn. */
const FAILED = new Set([
  'MALFORMED_FUNCTION_CALL',
  'UNEXPECTED_TOOL_CALL',
  'TOO_MANY_TOOL_CALLS',
  'MALFORMED_RESPONSE',
  'OTHER',
  'LANGUAGE',
  'NO_IMAGE',
  'IMAGE_OTHER',
]);

export function geminiFinish(raw: string, hasToolCalls: boolean): Finish {
  if (raw === 'MAX_TOKENS') return { reason: 'length', raw };
  if (FILTERED.has(raw)) return { reason: 'content_filter', raw };
  if (FAILED.has(raw)) return { reason: 'error', raw };
  // STOP, and values newer than this code: the model ended its turn normally.
  return { reason: hasToolCalls ? 'tool_calls' : 'stop', raw };
}

export function blockedPromptFinish(blockReason: string): Finish {
  return { reason: 'content_filter', raw: blockReason };
}
