/**
 * Request fields of the vendors' APIs that the gateway knows but cannot honour, and the service
 * tier every dialect accepts (docs/request-fields.md). A dialect's schema accepts each refused field
 * with any value, so that decode can answer 400 `unsupported_parameter` naming the field and saying
 * why, instead of the generic "unknown field" of a field nobody documented.
 */
import { Type, type TOptional, type TUnknown } from '@sinclair/typebox';
import { errors } from '../core/errors.ts';

/** Each refused field with the reason the client reads after `'<field>' is not supported`. */
export type RefusedFields = Readonly<Record<string, string>>;

/** Schema properties that take any value for each refused field. */
export function refusedFieldSchemas<const T extends RefusedFields>(fields: T): { [K in keyof T]: TOptional<TUnknown> } {
  return Object.fromEntries(Object.keys(fields).map((field) => [field, Type.Optional(Type.Unknown())])) as { [K in keyof T]: TOptional<TUnknown> };
}

/** The first refused field the body sets, as a 400 naming it; `null` counts as not sent. */
export function refuseFields(body: object, fields: RefusedFields): void {
  for (const [field, why] of Object.entries(fields)) {
    const value = (body as Readonly<Record<string, unknown>>)[field];
    if (value !== undefined && value !== null) throw errors.unsupportedParameter(field, `'${field}' is not supported${why}`);
  }
}

/**
 * `service_tier`: the catalog prices each model at its provider's standard tier, and the gateway
 * never asks for another, so only the values that mean the standard tier are accepted (sent
 * nowhere: the standard tier is every upstream's default). A flex, priority or scale tier would be
 * billed by the provider at a rate the catalog does not know.
 */
export function checkServiceTier(tier: string | null | undefined, standard: readonly string[]): void {
  if (tier === undefined || tier === null || standard.includes(tier)) return;
  throw errors.unsupportedParameter(
    'service_tier',
    `'service_tier' '${tier}' is not supported: the gateway serves and prices the standard tier only (${standard.map((value) => `'${value}'`).join(' or ')}).`,
  );
}
