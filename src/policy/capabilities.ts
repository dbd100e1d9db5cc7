/**
 * Capability rules (docs/chat-completions.md, rules 2 and 4–7). A capability is true
 * (supported), false (unsupported) or absent (unverified). Absent capabilities do not block a
 * feature, except the two the API says *require* a true value: web search (rule 2) and strict
 * JSON-schema output (rule 7).
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { CapabilitiesConfig } from '../config/schema.ts';
import { fieldRef, notSupported, type ParamRef, type PolicyViolation } from './violation.ts';

export function checkCapabilities(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  return (
    checkStreaming(request, capabilities) ??
    checkTools(request, capabilities) ??
    checkImages(request, capabilities) ??
    checkResponseFormat(request, capabilities) ??
    checkWebSearch(request, capabilities) ??
    checkSampling(request, capabilities) ??
    checkParallelToolCalls(request, capabilities)
  );
}

function checkStreaming(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  return request.stream && capabilities.streaming === false
    ? notSupported(fieldRef('stream'), 'is not supported by this model; send the request without streaming')
    : undefined;
}

const hasFunctionTools = (request: CanonicalRequest) => (request.tools?.length ?? 0) > 0;

/**
 * Per-tool `strict: true`. Strict tool support is its own capability where the config states it;
 * otherwise native structured outputs stand for it (JSON structured-output support alone is not
 * sufficient when the route says strict tools are unsupported).
 */
export function supportsStrictTools(capabilities: CapabilitiesConfig): boolean {
  return capabilities.strict_tools ?? capabilities.structured_outputs === true;
}

function checkTools(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  if (!hasFunctionTools(request)) return undefined;
  if (capabilities.tool_use === false) return notSupported(fieldRef('tools'), 'is not supported by this model: it cannot call tools');
  const strictIndex = request.tools!.findIndex((tool) => tool.strict === true);
  if (strictIndex >= 0 && !supportsStrictTools(capabilities)) {
    return notSupported({ kind: 'tool-strict', toolIndex: strictIndex }, 'is not supported by this model: strict tool schemas are unavailable');
  }
  return undefined;
}

function checkImages(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  if (capabilities.vision !== false) return undefined;
  const image = firstImage(request);
  return image ? notSupported(image, 'is not supported by this model: it does not accept image input') : undefined;
}

function firstImage(request: CanonicalRequest): ParamRef | undefined {
  for (let messageIndex = 0; messageIndex < request.messages.length; messageIndex++) {
    const content = request.messages[messageIndex].content;
    for (let partIndex = 0; partIndex < content.length; partIndex++) {
      const part = content[partIndex];
      if (part.type === 'image') return { kind: 'image', messageIndex, partIndex };
      if (part.type === 'tool_result') {
        const innerIndex = part.content.findIndex((inner) => inner.type === 'image');
        if (innerIndex >= 0) return { kind: 'image', messageIndex, partIndex, innerIndex };
      }
    }
  }
  return undefined;
}

function checkResponseFormat(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  const format = request.responseFormat;
  if (!format || format.kind === 'text') return undefined;
  const ref = fieldRef('responseFormat');
  if (format.kind === 'json_schema' && format.strict === true) {
    if (capabilities.structured_outputs !== true) {
      return notSupported({ kind: 'response-format-strict' }, 'is not supported by this model: strict JSON-schema output is unavailable');
    }
  } else if (capabilities.json_mode === false && !(format.kind === 'json_schema' && capabilities.structured_outputs === true)) {
    return notSupported(ref, 'is not supported by this model: JSON output is unavailable');
  }
  if (hasFunctionTools(request) && capabilities.json_mode_with_tools === false) {
    return notSupported(ref, 'cannot be combined with tools on this model');
  }
  return undefined;
}

function checkWebSearch(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  if (request.webSearch !== true) return undefined;
  const ref = fieldRef('webSearch');
  if (capabilities.web_search !== true) return notSupported(ref, 'is not supported by this model: web search is unavailable');
  if (hasFunctionTools(request) && capabilities.web_search_with_tools === false) {
    return notSupported(ref, 'cannot be combined with function tools on this model');
  }
  return undefined;
}

/** Models without sampling controls reject them, never ignore them (docs/chat-completions.md, rule 4). */
function checkSampling(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  if (capabilities.sampling !== false) return undefined;
  const why = 'is not supported by this model; omit it';
  if (request.temperature !== undefined) return notSupported(fieldRef('temperature'), why);
  if (request.topP !== undefined) return notSupported(fieldRef('topP'), why);
  if (request.topK !== undefined) return notSupported(fieldRef('topK'), why);
  return undefined;
}

/** `parallel_tool_calls: false` is honoured or rejected, never ignored; true is always fine (rule 5). */
function checkParallelToolCalls(request: CanonicalRequest, capabilities: CapabilitiesConfig): PolicyViolation | undefined {
  return request.parallelToolCalls === false && capabilities.parallel_tool_calls === false
    ? notSupported(fieldRef('parallelToolCalls'), '= false is not supported by this model: it cannot disable parallel tool calls')
    : undefined;
}
