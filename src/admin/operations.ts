/**
 * What an operator can do to the directory and the ledger, for both admin interfaces (the HTTP API
 * and the `gateway` CLI), so the two cannot disagree. Every change bumps the store's change feed,
 * which makes running instances drop their key caches within a polling interval, and calls
 * `onChange` so the local instance is current on its very next request. Every change also writes
 * one audit row through `audit`, which names who is acting (people/audit.ts).
 */
import { SCOPES, type Scope } from '../auth/context.ts';
import type { Catalog } from '../catalog/types.ts';
import { errors } from '../core/errors.ts';
import { formatUsd, type Picos, type RateMultiplier } from '../core/money.ts';
import type {
  Account,
  ApiKeyRecord,
  Balance,
  Consent,
  KeyLimits,
  LedgerEntry,
  Organization,
  OwnerPatch,
  OwnerRef,
  Store,
  UsageSummaryRow,
  WebhookEndpoint,
} from '../storage/store.ts';
import { checkWebhookUrl, type WebhookUrlPolicy } from '../webhooks/addresses.ts';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../webhooks/events.ts';
import { generateWebhookSecret } from '../webhooks/secret.ts';
import { issueKey, type IssuedKey, type KeyRequest } from './issue-key.ts';
import { parseCreditAmount } from './parse.ts';
import { changedFields, type Auditor } from '../people/audit.ts';
import { accountView, keyView, organizationView, webhookEndpointView } from './views.ts';

export interface OwnerInput {
  readonly name: string;
  readonly consent?: Partial<Consent>;
  readonly rate?: RateMultiplier | null;
}

export interface AdminOperationsOptions {
  readonly store: Store;
  /** Resolves allowed-model names (aliases included) to canonical ids. */
  readonly catalog: Pick<Catalog, 'resolve'>;
  /** Drops this process's caches after a change. */
  readonly onChange?: () => void;
  /**
   * Which webhook URLs may be registered (the config's `webhooks.allow_private_addresses`); read
   * when an endpoint is registered. Default: public addresses only.
   */
  readonly webhookPolicy?: () => WebhookUrlPolicy;
  /** Writes the audit row of each change, as the acting admin key, command or user. */
  readonly audit: Auditor;
}

export interface WebhookEndpointRequest {
  readonly owner: OwnerRef;
  readonly url: string;
  /** null or omitted = every event type. */
  readonly eventTypes?: readonly string[] | null;
}

export type AdminOperations = ReturnType<typeof createAdminOperations>;

export function createAdminOperations({ store, catalog, onChange, audit, webhookPolicy = () => ({ allowPrivateAddresses: false }) }: AdminOperationsOptions) {
  async function changed(): Promise<void> {
    await store.bumpVersion();
    onChange?.();
  }

  async function requireOrganization(id: string): Promise<Organization> {
    const organization = await store.getOrganization(id);
    if (!organization) throw errors.notFound('Organization', id);
    return organization;
  }

  async function requireAccount(id: string): Promise<Account> {
    const account = await store.getAccount(id);
    if (!account) throw errors.notFound('Account', id);
    return account;
  }

  async function requireOwner(owner: OwnerRef): Promise<Account | Organization> {
    switch (owner.kind) {
      case 'account':
        return requireAccount(owner.id);
      case 'organization':
        return requireOrganization(owner.id);
      default: {
        const unreachable: never = owner.kind;
        throw new Error(`unknown owner kind ${String(unreachable)}`);
      }
    }
  }

  return {
    async createOrganization(input: OwnerInput): Promise<Organization> {
      const organization = await store.createOrganization(input);
      await changed();
      await audit('organization.create', { kind: 'organization', id: organization.id }, changedFields(null, organizationView(organization)));
      return organization;
    },
    getOrganization: requireOrganization,
    listOrganizations: () => store.listOrganizations(),
    async updateOrganization(id: string, patch: OwnerPatch): Promise<Organization> {
      const before = await requireOrganization(id);
      const organization = await store.updateOrganization(id, patch);
      if (!organization) throw errors.notFound('Organization', id);
      await changed();
      await audit('organization.update', { kind: 'organization', id }, changedFields(organizationView(before), organizationView(organization)));
      return organization;
    },

    async createAccount(input: OwnerInput & { readonly organizationId?: string | null }): Promise<Account> {
      if (input.organizationId) await requireOrganization(input.organizationId);
      const account = await store.createAccount(input);
      await changed();
      await audit('account.create', { kind: 'account', id: account.id }, changedFields(null, accountView(account)));
      return account;
    },
    getAccount: requireAccount,
    listAccounts: () => store.listAccounts(),
    async updateAccount(id: string, patch: OwnerPatch): Promise<Account> {
      const before = await requireAccount(id);
      const account = await store.updateAccount(id, patch);
      if (!account) throw errors.notFound('Account', id);
      await changed();
      await audit('account.update', { kind: 'account', id }, changedFields(accountView(before), accountView(account)));
      return account;
    },

    getBalance: (owner: OwnerRef): Promise<Balance> => store.getBalance(owner),
    async addCredit(owner: OwnerRef, amount: Picos, note?: string | null): Promise<{ entry: LedgerEntry; balance: Balance }> {
      await requireOwner(owner);
      if (amount > MAX_CREDIT) throw creditTooLarge();
      let entry: LedgerEntry;
      try {
        entry = await store.addCredit(owner, amount, note ?? null);
      } catch (error) {
        // The ledger refuses a balance beyond its 64-bit columns.
        if (error instanceof RangeError) throw creditTooLarge();
        throw error;
      }
      await changed();
      const balance = await store.getBalance(owner);
      await audit('credit.add', owner, {
        amount_usd: { after: formatUsd(entry.amount) },
        note: { after: entry.note },
        balance_usd: { before: formatUsd(balance.balance - entry.amount), after: formatUsd(balance.balance) },
      });
      return { entry, balance };
    },

    async createKey(request: KeyRequest): Promise<IssuedKey> {
      await requireOwner(request.owner);
      checkLimits(request.limits);
      const issued = await issueKey(store, {
        ...request,
        scopes: request.scopes == null ? null : checkScopes(request.scopes),
        allowedModels: request.allowedModels == null ? null : resolveModels(catalog, request.allowedModels),
      });
      await changed();
      await audit('key.create', { kind: 'key', id: issued.record.id }, changedFields(null, keyView(issued.record)));
      return issued;
    },
    async getKey(id: string): Promise<ApiKeyRecord> {
      const key = await store.getKey(id);
      if (!key) throw errors.notFound('API key', id);
      return key;
    },
    async listKeys(owner?: OwnerRef): Promise<ApiKeyRecord[]> {
      if (owner) await requireOwner(owner);
      return store.listKeys(owner);
    },
    /** Revoking twice keeps the first revocation time. */
    async setKeyLimits(id: string, limits: KeyLimits | null): Promise<ApiKeyRecord> {
      checkLimits(limits);
      const before = await store.getKey(id);
      const key = await store.setKeyLimits(id, emptyAsNull(limits));
      if (!before || !key) throw errors.notFound('API key', id);
      await changed();
      await audit('key.limits', { kind: 'key', id }, changedFields(keyView(before), keyView(key)));
      return key;
    },
    async setOrganizationLimits(id: string, limits: KeyLimits | null): Promise<Organization> {
      checkLimits(limits);
      const before = await requireOrganization(id);
      const organization = await store.setOrganizationLimits(id, emptyAsNull(limits));
      if (!organization) throw errors.notFound('Organization', id);
      await changed();
      await audit('organization.limits', { kind: 'organization', id }, changedFields(organizationView(before), organizationView(organization)));
      return organization;
    },

    async revokeKey(id: string, now: number): Promise<ApiKeyRecord> {
      const existing = await store.getKey(id);
      if (!existing) throw errors.notFound('API key', id);
      if (existing.revokedAt !== null) return existing;
      const revoked = await store.revokeKey(id, now);
      if (!revoked) throw errors.notFound('API key', id);
      await changed();
      await audit('key.revoke', { kind: 'key', id }, changedFields(keyView(existing), keyView(revoked)));
      return revoked;
    },

    async usage(owner: OwnerRef, since: number): Promise<UsageSummaryRow[]> {
      await requireOwner(owner);
      return store.usageSummary(owner, since);
    },

    /** The answer holds the secret, the one time it is shown. */
    async createWebhookEndpoint(request: WebhookEndpointRequest): Promise<WebhookEndpoint> {
      await requireOwner(request.owner);
      const eventTypes = request.eventTypes == null ? null : checkEventTypes(request.eventTypes);
      const url = await checkWebhookUrl(request.url, 'url', webhookPolicy());
      const endpoint = await store.createWebhookEndpoint({ owner: request.owner, url, secret: generateWebhookSecret(), eventTypes });
      await audit('webhook.create', { kind: 'webhook', id: endpoint.id }, changedFields(null, webhookEndpointView(endpoint)));
      return endpoint;
    },
    async listWebhookEndpoints(owner?: OwnerRef): Promise<WebhookEndpoint[]> {
      if (owner) await requireOwner(owner);
      return store.listWebhookEndpoints(owner);
    },
    /** Its pending deliveries go with it. */
    async removeWebhookEndpoint(id: string): Promise<WebhookEndpoint> {
      const removed = await store.deleteWebhookEndpoint(id);
      if (!removed) throw errors.notFound('Webhook endpoint', id);
      await audit('webhook.remove', { kind: 'webhook', id }, changedFields(webhookEndpointView(removed), null));
      return removed;
    },
  };
}

function checkEventTypes(types: readonly string[]): WebhookEventType[] {
  if (types.length === 0) {
    throw errors.invalidValue('event_types', "'event_types' must name at least one event type; leave it out for every type.");
  }
  types.forEach((type, index) => {
    if (!isWebhookEventType(type)) {
      throw errors.invalidValue(`event_types[${index}]`, `Unknown event type '${type}'. Event types: ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
    }
  });
  return [...new Set(types)] as WebhookEventType[];
}

/** The largest balance the ledger's 64-bit columns hold, in pico-USD (about 9.2 million USD). */
const MAX_CREDIT = 9_223_372_036_854_775_807n;

const creditTooLarge = () => errors.invalidValue('amount_usd', `The credit would take the balance beyond the maximum of ${formatUsd(MAX_CREDIT)} USD.`);

function checkScopes(scopes: readonly string[]): Scope[] {
  const known = new Set<string>(SCOPES);
  scopes.forEach((scope, index) => {
    if (!known.has(scope)) {
      throw errors.invalidValue(`scopes[${index}]`, `Unknown scope '${scope}'. Scopes: ${SCOPES.join(', ')}.`);
    }
  });
  return [...new Set(scopes)] as Scope[];
}

function resolveModels(catalog: Pick<Catalog, 'resolve'>, names: readonly string[]): string[] {
  const ids = names.map((name, index) => {
    const id = catalog.resolve(name);
    if (id === undefined) throw errors.invalidValue(`allowed_models[${index}]`, `Unknown model '${name}'.`);
    return id;
  });
  return [...new Set(ids)];
}

/** The USD amounts of a key's limits parse (the schema checked the integers). */
function checkLimits(limits: KeyLimits | null | undefined): void {
  for (const field of ['spend_per_day_usd', 'spend_per_month_usd', 'spend_limit_usd'] as const) {
    const amount = limits?.[field];
    if (amount !== undefined) parseCreditAmount(amount, `limits.${field}`);
  }
}

/** `{}` and null both mean no limits; stored as null. */
function emptyAsNull(limits: KeyLimits | null): KeyLimits | null {
  return limits === null || Object.keys(limits).length === 0 ? null : limits;
}
