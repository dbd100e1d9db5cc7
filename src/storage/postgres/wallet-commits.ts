/**
 * Group commits per wallet: what makes one busy wallet cheap on PostgreSQL (docs/billing.md, "One
 * busy wallet").
 *
 * Each instance keeps, per wallet, at most one commit in flight. The holds, settlements and
 * releases asked for meanwhile wait for it and then go together in the next one: a single call of
 * `gateway_wallet_lease_commit` (migration 20, around migration 10's `gateway_wallet_commit`), one
 * round trip and one transaction that decides them in turn against the wallet row, locked once. So
 * a wallet costs each instance at most a wallet-row write or two per commit, however many requests
 * the commit carries, and the requests of a busy wallet no longer queue one by one on its row lock:
 * the lock is taken once per commit by each instance. An idle wallet's operation is sent at once (after the current
 * event-loop turn, so that what the same turn asked for shares it): nothing waits for a timer.
 *
 * The holds made here go in the database's decision: any instance sees them the moment `reserve`
 * returns, can settle or release them, and holds of all instances together never pass the balance.
 * The same commit also carries what this instance decided against its slice of the wallet, if it
 * holds one (wallet-leases.ts): those holds' final rows and charges, and the slice's growth or return.
 */
import type { Picos } from '../../core/money.ts';
import { bigintValue, walletKey } from '../rows.ts';
import type { OwnerRef } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';
import { RECALL_MS, SHARE, type CreditLeases, type LeasePart } from './wallet-leases.ts';

// The commit does not wait for its WAL to reach the disk (synchronous_commit off, for this
// statement's transaction only): the wallet row's lock is released as soon as the commit is
// decided, not a disk flush later, so the next commit of the wallet — from this instance or another
// — is not held up by the disk. What that risks, and why no promise of the ledger depends on it:
// docs/billing.md, "One busy wallet".
const COMMIT: Statement = {
  name: 'gateway_wallet_lease_commit',
  text: `SELECT part, id, amount, charged, recalled, leased
         FROM set_config('synchronous_commit', 'off', true) AS durability,
              gateway_wallet_lease_commit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                                    $16, $17, $18, $19, $20, $21, $22, $23,
                                    $24, $25, $26, $27, $28, $29, $30, $31, $32)`,
};

/** What a hold came to: granted, or refused (and whether slices of the wallet were out then). */
export interface HoldOutcome {
  readonly granted: boolean;
  /** Refused while slices of the wallet were out: they are recalled, and a retry may find the credit. */
  readonly leased: boolean;
}

/** A new hold, with its id and times chosen by the caller. */
export interface HoldRequest {
  readonly id: string;
  readonly amount: Picos;
  readonly requestId: string | null;
  readonly holderKind: 'instance' | 'job';
  readonly holderId: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly keyId: string | null;
}

/** A settlement (`cost` set) or a release (`cost` null) of an open reservation of the wallet. */
export interface ClosingRequest {
  readonly reservationId: string;
  readonly cost: Picos | null;
  readonly requestId: string | null;
  /** The id of the charge entry, if one is written. */
  readonly entryId: string;
}

/** What a closing came to: the reservation's amount and the charge; null when it was not open. */
export type ClosingResult = { readonly amount: Picos; readonly charged: Picos } | null;

interface Waiting<Request, Result> {
  readonly request: Request;
  readonly resolve: (result: Result) => void;
  readonly reject: (error: unknown) => void;
}

interface WalletQueue {
  readonly owner: OwnerRef;
  holds: Waiting<HoldRequest, HoldOutcome>[];
  closings: Waiting<ClosingRequest, ClosingResult>[];
  /** Whether a commit of this wallet is in flight or about to be sent. */
  busy: boolean;
}

export class WalletCommits {
  readonly #database: PostgresDatabase;
  readonly #now: () => number;
  readonly #queues = new Map<string, WalletQueue>();
  readonly #instanceId: string;
  /** This instance's slices, when it takes any (set once, by the ledger). */
  leases: CreditLeases | null = null;

  constructor(database: PostgresDatabase, now: () => number, instanceId: string) {
    this.#database = database;
    this.#now = now;
    this.#instanceId = instanceId;
  }

  /** Whether the hold was granted (the wallet's available balance covered it when its commit ran). */
  hold(owner: OwnerRef, request: HoldRequest): Promise<HoldOutcome> {
    return new Promise((resolve, reject) => {
      const queue = this.#queue(owner);
      queue.holds.push({ request, resolve, reject });
      this.#schedule(queue);
    });
  }

  close(owner: OwnerRef, request: ClosingRequest): Promise<ClosingResult> {
    return new Promise((resolve, reject) => {
      const queue = this.#queue(owner);
      queue.closings.push({ request, resolve, reject });
      this.#schedule(queue);
    });
  }

  /**
   * The first closing of each reservation; a second one in the same commit (a settle racing a
   * release) finds it closed already, as it would in a later commit.
   */
  #firstOfEach(closings: readonly Waiting<ClosingRequest, ClosingResult>[]): Waiting<ClosingRequest, ClosingResult>[] {
    const seen = new Set<string>();
    const first: Waiting<ClosingRequest, ClosingResult>[] = [];
    for (const closing of closings) {
      if (seen.has(closing.request.reservationId)) closing.resolve(null);
      else {
        seen.add(closing.request.reservationId);
        first.push(closing);
      }
    }
    return first;
  }

  #queue(owner: OwnerRef): WalletQueue {
    const key = walletKey(owner);
    let queue = this.#queues.get(key);
    if (!queue) {
      queue = { owner, holds: [], closings: [], busy: false };
      this.#queues.set(key, queue);
    }
    return queue;
  }

  /** Asks for a commit of the wallet for its slice alone (wallet-leases.ts decides what it carries). */
  poke(owner: OwnerRef): void {
    this.#schedule(this.#queue(owner));
  }

  #schedule(queue: WalletQueue): void {
    if (queue.busy) return;
    queue.busy = true;
    setImmediate(() => void this.#commit(queue));
  }

  async #commit(queue: WalletQueue): Promise<void> {
    const { holds, owner } = queue;
    const closings = this.#firstOfEach(queue.closings);
    queue.holds = [];
    queue.closings = [];
    const lease = this.leases?.take(owner) ?? null;
    try {
      if (holds.length === 0 && closings.length === 0 && lease === null) return;
      const { rows } = await this.#database.query(COMMIT, [
        owner.kind,
        owner.id,
        this.#now(),
        closings.map(({ request }) => request.reservationId),
        closings.map(({ request }) => request.cost),
        closings.map(({ request }) => request.requestId),
        closings.map(({ request }) => request.entryId),
        holds.map(({ request }) => request.id),
        holds.map(({ request }) => request.amount),
        holds.map(({ request }) => request.requestId),
        holds.map(({ request }) => request.holderKind),
        holds.map(({ request }) => request.holderId),
        holds.map(({ request }) => request.createdAt),
        holds.map(({ request }) => request.expiresAt),
        holds.map(({ request }) => request.keyId),
        ...leaseValues(lease, this.#instanceId),
      ]);
      const outcomes = new Map<string, Record<string, unknown>>();
      const sliceCharges = new Map<string, bigint>();
      let status: Record<string, unknown> | undefined;
      for (const row of rows) {
        if (row.part === 'lease') status = row;
        else if (row.part === 'slice') sliceCharges.set(row.id as string, bigintValue(row.charged));
        else outcomes.set(row.id as string, row);
      }
      if (lease) {
        this.leases?.committed(owner, {
          amount: status?.amount === null || status?.amount === undefined ? null : bigintValue(status.amount),
          charged: sliceCharges,
          recalled: status?.recalled === true,
        });
      }
      for (const { request, resolve } of closings) {
        const row = outcomes.get(request.reservationId);
        resolve(row ? { amount: bigintValue(row.amount), charged: bigintValue(row.charged) } : null);
      }
      const leased = status?.leased === true;
      for (const { request, resolve } of holds) resolve({ granted: outcomes.has(request.id), leased });
    } catch (error) {
      if (lease) this.leases?.failed(owner, error);
      for (const { reject } of [...closings, ...holds]) reject(error);
    } finally {
      if (queue.holds.length > 0 || queue.closings.length > 0 || this.leases?.pending(owner)) setImmediate(() => void this.#commit(queue));
      else {
        queue.busy = false;
        this.#queues.delete(walletKey(owner));
      }
    }
  }
}

/** The slice's parameters of the commit ($16 to $32); a commit without a slice part passes none. */
function leaseValues(lease: LeasePart | null, instanceId: string): unknown[] {
  const closings = lease?.closings ?? [];
  return [
    lease?.id ?? null,
    lease?.isNew ?? false,
    instanceId,
    lease?.change ?? 0n,
    lease?.close ?? false,
    lease?.expiresAt ?? 0,
    SHARE,
    RECALL_MS,
    closings.map(({ reservation }) => reservation.id),
    closings.map(({ reservation }) => reservation.amount),
    closings.map(({ cost }) => cost),
    closings.map(({ requestId }) => requestId),
    closings.map(({ entryId }) => entryId),
    closings.map(({ reservation }) => reservation.keyId),
    closings.map(({ reservation }) => reservation.createdAt),
    closings.map(({ reservation }) => reservation.expiresAt),
    closings.map(({ closedAt }) => closedAt),
  ];
}
