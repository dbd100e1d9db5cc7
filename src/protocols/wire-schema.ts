/**
 * Upstream bodies are checked, never cast (docs/protocols.md, "Validated upstream bodies"). Each
 * protocol's wire.ts holds a deliberately partial schema of the response and of each stream event it
 * reads: only the fields the gateway uses, each optional where a compatible server may leave it out,
 * every token count a non-negative integer (usage is the input of billing: a count of 5.5, -50 or
 * "5" would otherwise become a thrown conversion, a negative charge or a string in a sum). A body or
 * event that fails its schema is a malformed upstream answer: thrown before the first byte (routing
 * falls back), an in-stream error after it; its cause carries the raw body, cut short, for the log.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { errors, type GatewayError } from '../core/errors.ts';

// Types are checked as sent: nothing is coerced, and unknown fields are left alone (partial schemas).
const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false });

/** A field the provider may leave out or send as null. */
export const Maybe = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/**
 * The largest token count an answer may report: far above any context window, far below what
 * would overflow a 64-bit charge at any catalog rate. A count above it is a provider's fault, not a
 * bill.
 */
export const MAX_TOKEN_COUNT = 1_000_000_000;

/** A token count: a non-negative integer up to MAX_TOKEN_COUNT, or absent. */
export const TokenCount = Maybe(Type.Integer({ minimum: 0, maximum: MAX_TOKEN_COUNT }));

/** An object of which only the listed fields are checked. */
export const Partial = <T extends Parameters<typeof Type.Object>[0]>(properties: T) => Type.Object(properties);

/** How much of a failing body the log keeps. */
const EXCERPT_LENGTH = 2000;

/** The cause of a malformed-upstream error: what failed and the raw body, cut short, for the log. */
export class UpstreamBodyMismatch extends Error {
  readonly body: string;

  constructor(problem: string, body: string) {
    super(problem);
    this.name = 'UpstreamBodyMismatch';
    this.body = body.length > EXCERPT_LENGTH ? `${body.slice(0, EXCERPT_LENGTH)}…` : body;
  }
}

export type WireCheck<T> = (value: unknown) => { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: GatewayError };

/**
 * Compiles a schema once, on its first check (a process starts without compiling the schemas of
 * protocols it does not call); `what` names the thing in the error ("a response body", "a
 * message_delta event").
 */
export function wireCheck<S extends TSchema>(schema: S, what: string): WireCheck<Static<S>> {
  let validate: ValidateFunction<Static<S>> | undefined;
  return (value) => {
    validate ??= ajv.compile<Static<S>>(schema);
    if (validate(value)) return { ok: true, value };
    const problem = describe(validate.errors?.[0]);
    return {
      ok: false,
      error: errors.malformedUpstream(`${what} that does not match its documented shape (${problem})`, new UpstreamBodyMismatch(problem, raw(value))),
    };
  };
}

/** The checked value, or the malformed-upstream error thrown (a whole response: nothing was sent yet). */
export function checkedBody<T>(check: WireCheck<T>, value: unknown): T {
  const result = check(value);
  if (!result.ok) throw result.error;
  return result.value;
}

function describe(error: ErrorObject | undefined): string {
  if (error === undefined) return 'unknown mismatch';
  return `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`;
}

function raw(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
