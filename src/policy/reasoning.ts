/**
 * Reasoning controls (docs/chat-completions.md, rule 8; a messages-style thinking budget is
 * never resized). An effort must be one the route lists in
 * `limits.reasoning_efforts`; `none` is a value like any other (never turned into `low`, never
 * dropped). Thinking modes of the messages dialect have their own capabilities.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { CapabilitiesConfig, LimitsConfig } from '../config/schema.ts';
import { fieldRef, notSupported, type PolicyViolation } from './violation.ts';

export function checkReasoning(request: CanonicalRequest, capabilities: CapabilitiesConfig, limits: LimitsConfig): PolicyViolation | undefined {
  const reasoning = request.reasoning;
  if (!reasoning) return undefined;
  const ref = fieldRef('reasoning');
  if (capabilities.reasoning === false) return notSupported(ref, 'is not supported by this model: it has no reasoning controls');
  switch (reasoning.kind) {
    case 'effort': {
      const allowed = limits.reasoning_efforts;
      if (allowed && !allowed.includes(reasoning.effort)) {
        const list = allowed.length ? allowed.map((value) => `'${value}'`).join(', ') : 'none';
        return notSupported(ref, `= '${reasoning.effort}' is not supported by this model (supported values: ${list})`);
      }
      return undefined;
    }
    case 'budget':
      if (capabilities.thinking_manual === false) return notSupported(ref, 'with a token budget is not supported by this model; use adaptive thinking');
      // A fixed thinking budget cannot be combined with a forced tool call (the Messages API
      // does not allow it).
      if (request.toolChoice?.kind === 'required' || request.toolChoice?.kind === 'tool') {
        return notSupported(fieldRef('toolChoice'), 'cannot force a tool while manual thinking is enabled');
      }
      return undefined;
    case 'adaptive':
      return capabilities.thinking_adaptive === false ? notSupported(ref, 'in adaptive mode is not supported by this model') : undefined;
    case 'disabled':
      return capabilities.thinking_disable === false ? notSupported(ref, 'cannot be disabled on this model') : undefined;
    default: {
      const unreachable: never = reasoning;
      return unreachable;
    }
  }
}
