/**
 * Per-route parameter constraints (`parameters.chat` of an endpoint; docs/catalog.md, "Parameter
 * constraints"). Keys are API parameter names, dotted for nested values (`response_format.type`,
 * `extra_body.cloud_a.top_k`). Each canonical field is read under the key the API uses, so the
 * same constraints apply whichever dialect the request came in. Omitted constraint fields are
 * unverified and do not block; `extra_body` options are forwarded only when the route lists them.
 */
import type { CanonicalRequest, ToolChoice } from '../canonical/index.ts';
import type { ParameterConstraintConfig } from '../config/schema.ts';
import { fieldRef, notSupported, type ParamRef, type PolicyViolation } from './violation.ts';

type Constraints = Readonly<Record<string, ParameterConstraintConfig>>;

interface ConstraintTarget {
  readonly key: string;
  readonly ref: ParamRef;
  readonly value: (request: CanonicalRequest) => unknown;
}

const TARGETS: readonly ConstraintTarget[] = [
  { key: 'temperature', ref: fieldRef('temperature'), value: (r) => r.temperature },
  { key: 'top_p', ref: fieldRef('topP'), value: (r) => r.topP },
  { key: 'top_k', ref: fieldRef('topK'), value: (r) => r.topK },
  { key: 'max_tokens', ref: fieldRef('maxOutputTokens'), value: (r) => r.maxOutputTokens },
  { key: 'max_completion_tokens', ref: fieldRef('maxOutputTokens'), value: (r) => r.maxOutputTokens },
  { key: 'stop', ref: fieldRef('stop'), value: (r) => r.stop },
  { key: 'seed', ref: fieldRef('seed'), value: (r) => r.seed },
  { key: 'presence_penalty', ref: fieldRef('presencePenalty'), value: (r) => r.presencePenalty },
  { key: 'frequency_penalty', ref: fieldRef('frequencyPenalty'), value: (r) => r.frequencyPenalty },
  { key: 'logprobs', ref: fieldRef('logprobs'), value: (r) => r.logprobs },
  { key: 'top_logprobs', ref: fieldRef('topLogprobs'), value: (r) => r.topLogprobs },
  { key: 'parallel_tool_calls', ref: fieldRef('parallelToolCalls'), value: (r) => r.parallelToolCalls },
  { key: 'user', ref: fieldRef('user'), value: (r) => r.user },
  { key: 'tools', ref: fieldRef('tools'), value: (r) => (r.tools?.length ? r.tools : undefined) },
  { key: 'tool_choice', ref: fieldRef('toolChoice'), value: (r) => toolChoiceValue(r.toolChoice) },
  { key: 'response_format', ref: fieldRef('responseFormat'), value: (r) => r.responseFormat },
  { key: 'response_format.type', ref: fieldRef('responseFormat'), value: (r) => r.responseFormat?.kind },
  { key: 'reasoning_effort', ref: fieldRef('reasoning'), value: (r) => (r.reasoning?.kind === 'effort' ? r.reasoning.effort : undefined) },
  { key: 'stream', ref: fieldRef('stream'), value: (r) => (r.stream ? true : undefined) },
];

/** tool_choice as the API's wire values: a mode string, or an object naming a function. */
function toolChoiceValue(choice: ToolChoice | undefined): unknown {
  if (!choice) return undefined;
  return choice.kind === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.kind;
}

export function checkConstraints(request: CanonicalRequest, constraints: Constraints | undefined): PolicyViolation | undefined {
  if (constraints) {
    for (const target of TARGETS) {
      const constraint = constraints[target.key];
      if (!constraint) continue;
      const value = target.value(request);
      if (value === undefined) continue;
      const why = constraintViolation(constraint, value);
      if (why) return notSupported(target.ref, why);
    }
  }
  return checkExtraBody(request, constraints ?? {});
}

function checkExtraBody(request: CanonicalRequest, constraints: Constraints): PolicyViolation | undefined {
  for (const [group, options] of Object.entries(request.extraBody ?? {})) {
    for (const [key, value] of Object.entries(options as Record<string, unknown>)) {
      const path = `${group}.${key}`;
      const ref: ParamRef = { kind: 'extra-body', path };
      const constraint = constraints[`extra_body.${path}`];
      if (!constraint) return notSupported(ref, 'is not supported by this model');
      const why = constraintViolation(constraint, value);
      if (why) return notSupported(ref, why);
    }
  }
  return undefined;
}

/** Why `value` breaks the constraint, or undefined when it does not. */
export function constraintViolation(constraint: ParameterConstraintConfig, value: unknown): string | undefined {
  if (constraint.supported === false) return 'is not supported by this model';
  if (constraint.type && !hasType(value, constraint.type)) return `must be of type ${constraint.type} on this model`;
  // The type applies to the value as sent; allowed values and bounds to each element of a list (stop).
  const items = Array.isArray(value) ? value : [value];
  for (const item of items) {
    if (constraint.allowed_values && !constraint.allowed_values.some((allowed) => allowed === item)) {
      const list = constraint.allowed_values.map((allowed) => JSON.stringify(allowed)).join(', ');
      return `= ${JSON.stringify(item)} is not supported by this model (supported values: ${list || 'none'})`;
    }
    if (typeof item === 'number') {
      if (constraint.minimum !== undefined && item < constraint.minimum) return `must be at least ${constraint.minimum} on this model`;
      if (constraint.maximum !== undefined && item > constraint.maximum) return `must be at most ${constraint.maximum} on this model`;
    }
  }
  return undefined;
}

function hasType(value: unknown, type: NonNullable<ParameterConstraintConfig['type']>): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    default: {
      const unreachable: never = type;
      return unreachable;
    }
  }
}
