/**
 * The reservation lifecycle around one request: hold the quote (402 when it cannot be held),
 * then either settle the real cost or release everything. Each reservation is finished exactly
 * once; the store itself refuses a second settlement, so a retry can never charge twice.
 */
import type { GatewayConfig } from '../config/schema.ts';
import { errors } from '../core/errors.ts';
import { formatUsd, type Picos } from '../core/money.ts';
import type { HoldOwner, LedgerStore, OwnerRef, Reservation, SpendCap } from '../storage/store.ts';

/** How long a reservation lives when the config does not say (a dead process's hold then expires). */
export const DEFAULT_RESERVATION_TTL_SECONDS = 900;

/** How long a request may hold credit before it is presumed dead: `billing.reservation_ttl_seconds`. */
export function reservationTtlMs(config: GatewayConfig): number {
  return (config.billing?.reservation_ttl_seconds ?? DEFAULT_RESERVATION_TTL_SECONDS) * 1000;
}

/** How long an instance's heartbeat may be missing before its holds are released, when the config does not say. */
const DEFAULT_INSTANCE_LAPSE_SECONDS = 30;

/**
 * How long a PostgreSQL instance may be silent before a live one releases its holds:
 * `billing.instance_lapse_seconds`.
 */
export function instanceLapseMs(config: GatewayConfig): number {
  return (config.billing?.instance_lapse_seconds ?? DEFAULT_INSTANCE_LAPSE_SECONDS) * 1000;
}

export interface CreditHold {
  readonly reservation: Reservation;
  /** Charges `cost` (capped by the store at what the balance allows); returns what was charged. */
  settle(cost: Picos): Promise<Picos>;
  /** Returns the whole hold (a failed or rejected call). */
  release(): Promise<void>;
}

export async function holdCredit(
  ledger: LedgerStore,
  input: {
    owner: OwnerRef;
    amount: Picos;
    requestId: string;
    now: number;
    ttlMs: number;
    holder?: HoldOwner;
    /** The key making the hold: its charge is counted against its spend limits. */
    keyId?: string | null;
    /** Spend limits the hold must fit (docs/limits.md); a refusal is `refuseCap`'s error. */
    caps?: readonly SpendCap[];
    refuseCap?: (cap: SpendCap) => Error;
  },
): Promise<CreditHold> {
  const reserve = {
    owner: input.owner,
    amount: input.amount,
    requestId: input.requestId,
    expiresAt: input.now + input.ttlMs,
    holder: input.holder,
    keyId: input.keyId ?? null,
  };
  let reservation: Reservation | null;
  if (input.caps && input.caps.length > 0) {
    const outcome = await ledger.reserveCapped({ ...reserve, caps: input.caps });
    if ('refused' in outcome && outcome.refused === 'cap') throw input.refuseCap?.(outcome.cap) ?? (await insufficientCredit(ledger, input));
    reservation = 'reservation' in outcome ? outcome.reservation : null;
  } else {
    reservation = await ledger.reserve(reserve);
  }
  if (!reservation) throw await insufficientCredit(ledger, input);
  return creditHoldFor(ledger, reservation, input.requestId);
}

/** The 402 of a refused hold, with the figures the client needs to act on it. */
async function insufficientCredit(ledger: LedgerStore, input: { owner: OwnerRef; amount: Picos }): Promise<Error> {
  const { available } = await ledger.getBalance(input.owner);
  return errors.insufficientQuota({ availableUsd: formatUsd(available), neededUsd: formatUsd(input.amount) });
}

/** The hold over an existing reservation (also for work resumed from a stored reservation id). */
export function creditHoldFor(ledger: LedgerStore, reservation: Reservation, requestId: string): CreditHold {
  let finished: Promise<Picos> | undefined;
  return {
    reservation,
    settle(cost) {
      // A reservation that expired meanwhile was already returned by the sweeper: nothing is charged.
      finished ??= ledger.settle(reservation.id, cost, requestId).then((outcome) => outcome?.charged ?? 0n);
      return finished;
    },
    async release() {
      finished ??= ledger.release(reservation.id).then(() => 0n);
      await finished;
    },
  };
}
