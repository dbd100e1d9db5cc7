/**
 * Request schemas of the admin API. Fastify validates against them (strictly, no coercion), so a
 * bad field is a 400 naming it; unknown fields are refused rather than ignored.
 */
import { Type, type Static } from '@sinclair/typebox';
import { SCOPES } from '../auth/context.ts';

const Id = Type.String({ minLength: 1, maxLength: 128 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
/** A multiplier as a decimal string ("1.15") or a JSON number; null resets it to the default. */
const Rate = Type.Union([Type.String({ pattern: '^\\d+(\\.\\d+)?$' }), Type.Number({ minimum: 0 })]);
const UsdAmount = Type.String({ pattern: '^\\d+(\\.\\d+)?$', maxLength: 40, description: 'USD as a decimal string, e.g. "10.50"' });

const ConsentFields = {
  community_supply: Type.Optional(Type.Boolean()),
  training_use: Type.Optional(Type.Boolean()),
};

export const IdParams = Type.Object({ id: Id });
export type IdParams = Static<typeof IdParams>;

export const KeyLimitsBody = Type.Object(
  {
    requests_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    concurrent_requests: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    tokens_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    spend_per_day_usd: Type.Optional(UsdAmount),
    spend_per_month_usd: Type.Optional(UsdAmount),
    spend_limit_usd: Type.Optional(UsdAmount),
  },
  { additionalProperties: false },
);

export const CreateOrganizationBody = Type.Object(
  { name: Name, ...ConsentFields, rate: Type.Optional(Type.Union([Rate, Type.Null()])), limits: Type.Optional(Type.Union([KeyLimitsBody, Type.Null()])) },
  { additionalProperties: false },
);
export type CreateOrganizationBody = Static<typeof CreateOrganizationBody>;

export const CreateAccountBody = Type.Object(
  {
    name: Name,
    organization_id: Type.Optional(Type.Union([Id, Type.Null()])),
    ...ConsentFields,
    rate: Type.Optional(Type.Union([Rate, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateAccountBody = Static<typeof CreateAccountBody>;

export const PatchOwnerBody = Type.Object(
  { name: Type.Optional(Name), ...ConsentFields, rate: Type.Optional(Type.Union([Rate, Type.Null()])) },
  { additionalProperties: false },
);
export type PatchOwnerBody = Static<typeof PatchOwnerBody>;

export const PatchOrganizationBody = Type.Object(
  {
    name: Type.Optional(Name),
    ...ConsentFields,
    rate: Type.Optional(Type.Union([Rate, Type.Null()])),
    /** Replaces the organization's limits; null removes them. */
    limits: Type.Optional(Type.Union([KeyLimitsBody, Type.Null()])),
  },
  { additionalProperties: false },
);
export type PatchOrganizationBody = Static<typeof PatchOrganizationBody>;

export const CreditBody = Type.Object({ amount_usd: UsdAmount, note: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false });
export type CreditBody = Static<typeof CreditBody>;

export const KeyLimitsPatchBody = Type.Object({ limits: Type.Union([KeyLimitsBody, Type.Null()]) }, { additionalProperties: false });
export type KeyLimitsPatchBody = Static<typeof KeyLimitsPatchBody>;

export const CreateKeyBody = Type.Object(
  {
    account_id: Type.Optional(Id),
    organization_id: Type.Optional(Id),
    name: Type.Optional(Type.Union([Name, Type.Null()])),
    scopes: Type.Optional(Type.Union([Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope))), { maxItems: 32 }), Type.Null()])),
    allowed_models: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 1000 }), Type.Null()])),
    limits: Type.Optional(Type.Union([KeyLimitsBody, Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateKeyBody = Static<typeof CreateKeyBody>;

/** Lists and reports select an owner by one of two query parameters. */
export const OwnerQuery = Type.Object({ account_id: Type.Optional(Id), organization_id: Type.Optional(Id) }, { additionalProperties: false });
export type OwnerQuery = Static<typeof OwnerQuery>;

export const UsageQuery = Type.Object(
  {
    account_id: Type.Optional(Id),
    organization_id: Type.Optional(Id),
    since: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Epoch seconds or an ISO 8601 date' })),
  },
  { additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuery>;

export const CreateWebhookBody = Type.Object(
  {
    account_id: Type.Optional(Id),
    organization_id: Type.Optional(Id),
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'An http or https URL on a public address' }),
    /** Checked against the event types by the operation, so that the API and the CLI say the same. */
    event_types: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 32 }), Type.Null()])),
  },
  { additionalProperties: false },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

const Email = Type.String({ minLength: 3, maxLength: 254 });
const RoleFields = {
  role: Type.Union([Type.Literal('operator'), Type.Literal('member')]),
  account_id: Type.Optional(Type.Union([Id, Type.Null()])),
  organization_id: Type.Optional(Type.Union([Id, Type.Null()])),
};

export const CreateUserBody = Type.Object(
  { email: Email, display_name: Type.Optional(Type.Union([Name, Type.Null()])), password: Type.Optional(Type.String({ maxLength: 256 })), ...RoleFields },
  { additionalProperties: false },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const InvitationBody = Type.Object({ email: Email, ...RoleFields }, { additionalProperties: false });
export type InvitationBody = Static<typeof InvitationBody>;

export const PageQuery = Type.Object(
  { after: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })) },
  { additionalProperties: false },
);
export type PageQuery = Static<typeof PageQuery>;
