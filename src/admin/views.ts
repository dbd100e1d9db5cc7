/**
 * JSON representations of directory objects, shared by the admin API and `gateway … --json`.
 * Money is a decimal string; times are epoch seconds, like the public API's `created` fields.
 */
import { formatRateMultiplier, formatUsd } from '../core/money.ts';
import type { Account, ApiKeyRecord, Balance, LedgerEntry, Organization, OwnerRef, UsageSummaryRow, WebhookEndpoint } from '../storage/store.ts';

const seconds = (millis: number) => Math.floor(millis / 1000);

function balanceFields(balance: Balance) {
  return {
    balance_usd: formatUsd(balance.balance),
    reserved_usd: formatUsd(balance.reserved),
    available_usd: formatUsd(balance.available),
  };
}

export function organizationView(organization: Organization, balance?: Balance) {
  return {
    id: organization.id,
    object: 'organization' as const,
    name: organization.name,
    community_supply: organization.consent.communitySupply,
    training_use: organization.consent.trainingUse,
    /** null: the configured default rate applies. */
    rate: organization.rate === null ? null : formatRateMultiplier(organization.rate),
    /** Over all the organization's keys together (docs/limits.md). */
    limits: organization.limits,
    ...(balance ? balanceFields(balance) : {}),
    created_at: seconds(organization.createdAt),
  };
}

export function accountView(account: Account, balance?: Balance) {
  return {
    id: account.id,
    object: 'account' as const,
    name: account.name,
    organization_id: account.organizationId,
    community_supply: account.consent.communitySupply,
    training_use: account.consent.trainingUse,
    rate: account.rate === null ? null : formatRateMultiplier(account.rate),
    ...(balance ? balanceFields(balance) : {}),
    created_at: seconds(account.createdAt),
  };
}

/** The owner as the pair of mutually exclusive id fields the admin API takes and returns. */
export function ownerFields(owner: OwnerRef) {
  return {
    account_id: owner.kind === 'account' ? owner.id : null,
    organization_id: owner.kind === 'organization' ? owner.id : null,
  };
}

/** `plaintext` is given only in the answer to the creation, the one time the key is shown. */
export function keyView(key: ApiKeyRecord, plaintext?: string) {
  return {
    id: key.id,
    object: 'api_key' as const,
    ...ownerFields(key.owner),
    name: key.name,
    display_prefix: key.displayPrefix,
    scopes: key.scopes,
    allowed_models: key.allowedModels,
    limits: key.limits,
    created_at: seconds(key.createdAt),
    revoked_at: key.revokedAt === null ? null : seconds(key.revokedAt),
    ...(plaintext === undefined ? {} : { key: plaintext }),
  };
}

export function creditView(entry: LedgerEntry, balance: Balance) {
  return {
    id: entry.id,
    object: 'credit_grant' as const,
    ...ownerFields(entry.owner),
    amount_usd: formatUsd(entry.amount),
    note: entry.note,
    ...balanceFields(balance),
    created_at: seconds(entry.createdAt),
  };
}

/**
 * Served requests with their tokens and cost, and the refused ones (no usage, no cost), per model and
 * in total; with the requests whose upstream reported more than their hold and what that left
 * unbilled (docs/billing.md, "Money caps").
 */
export function usageView(owner: OwnerRef, since: number, rows: readonly UsageSummaryRow[]) {
  const total = rows.reduce(
    (sum, row) => ({
      requests: sum.requests + row.requests,
      refusedRequests: sum.refusedRequests + row.refusedRequests,
      inputTokens: sum.inputTokens + row.inputTokens,
      outputTokens: sum.outputTokens + row.outputTokens,
      cost: sum.cost + row.cost,
      overHoldRequests: sum.overHoldRequests + row.overHoldRequests,
      overHold: sum.overHold + row.overHold,
    }),
    { requests: 0, refusedRequests: 0, inputTokens: 0, outputTokens: 0, cost: 0n, overHoldRequests: 0, overHold: 0n },
  );
  const line = (row: Omit<UsageSummaryRow, 'model'>) => ({
    requests: row.requests,
    refused_requests: row.refusedRequests,
    input_tokens: row.inputTokens,
    output_tokens: row.outputTokens,
    cost_usd: formatUsd(row.cost),
    over_hold_requests: row.overHoldRequests,
    over_hold_usd: formatUsd(row.overHold),
  });
  return {
    object: 'usage' as const,
    ...ownerFields(owner),
    since: seconds(since),
    data: rows.map((row) => ({ model: row.model, ...line(row) })),
    total: line(total),
  };
}

/** `withSecret` only in the answer to the creation, the one time the secret is shown. */
export function webhookEndpointView(endpoint: WebhookEndpoint, withSecret = false) {
  return {
    id: endpoint.id,
    object: 'webhook_endpoint' as const,
    ...ownerFields(endpoint.owner),
    url: endpoint.url,
    /** null: every event type. */
    event_types: endpoint.eventTypes,
    created_at: seconds(endpoint.createdAt),
    ...(withSecret ? { secret: endpoint.secret } : {}),
  };
}

/** The answer to a removal: the endpoint as it was, marked deleted. */
export function deletedWebhookEndpointView(endpoint: WebhookEndpoint) {
  return { ...webhookEndpointView(endpoint), deleted: true as const };
}
