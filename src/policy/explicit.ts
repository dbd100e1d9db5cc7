/**
 * Which parameters a request sets explicitly. Omission is never a value: `logprobs: false` is
 * explicit (and rejected where logprobs cannot be expressed), an absent `logprobs` is not.
 */
import type { CanonicalRequest } from '../canonical/index.ts';
import type { CanonicalParam } from '../canonical/index.ts';

export function isExplicit(request: CanonicalRequest, param: CanonicalParam): boolean {
  switch (param) {
    case 'stop':
      return request.stop !== undefined;
    case 'seed':
      return request.seed !== undefined;
    case 'presencePenalty':
      return request.presencePenalty !== undefined;
    case 'frequencyPenalty':
      return request.frequencyPenalty !== undefined;
    case 'logprobs':
      return request.logprobs !== undefined;
    case 'topLogprobs':
      return request.topLogprobs !== undefined;
    case 'temperature':
      return request.temperature !== undefined;
    case 'topP':
      return request.topP !== undefined;
    case 'topK':
      return request.topK !== undefined;
    case 'parallelToolCalls':
      return request.parallelToolCalls !== undefined;
    case 'responseFormat':
      return request.responseFormat !== undefined;
    case 'reasoning':
      return request.reasoning !== undefined;
    case 'webSearch':
      return request.webSearch === true;
    case 'tools':
      return request.tools !== undefined && request.tools.length > 0;
    case 'toolChoice':
      return request.toolChoice !== undefined;
    case 'user':
      return request.user !== undefined;
    case 'verbosity':
      return request.verbosity !== undefined;
    case 'reasoningSummary':
      return request.reasoningSummary !== undefined;
    case 'outputEffort':
      return request.outputEffort !== undefined;
    case 'toolInputExamples':
      return request.tools?.some((tool) => tool.inputExamples !== undefined) === true;
    default: {
      const unreachable: never = param;
      return unreachable;
    }
  }
}
