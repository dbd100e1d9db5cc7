/**
 * The credit ledger on PostgreSQL. Each operation is one statement (a chain of data-modifying CTEs),
 * so it is atomic and costs one round trip. Concurrency rests on row locks: an UPDATE that waits for
 * a wallet or reservation row re-checks its WHERE clause against the committed new version (READ
 * COMMITTED), so a conditional hold or a status change can never act on stale values.
 */
import type { Picos } from '../../core/money.ts';
import { timeOrderedId } from '../../core/ids.ts';
import {
  INT64_MAX,
  balanceFromRow,
  bigintValue,
  checkAmount,
  ledgerEntryFromRow,
  newReservation,
  overflowError,
  ownerNotFound,
  reservationFromRow,
  settleOutcome,
} from '../rows.ts';
import { capTimes, firstRefusal, type Spent } from '../spend.ts';
import type { LedgerStore, OwnerRef, ReserveInput } from '../store.ts';
import type { PostgresDatabase, Statement } from './database.ts';
import { WalletCommits } from './wallet-commits.ts';
import { CreditLeases, IDLE_MS } from './wallet-leases.ts';

/**
 * How long, in turn, a hold refused while slices of its wallet were out waits before it is asked
 * again (the slices are recalled meanwhile: wallet-leases.ts). Together a little longer than an idle
 * slice takes to come back, so a hold the balance can pay is not refused for credit another
 * instance's slice held.
 */
const RECALL_RETRY_MS = [IDLE_MS / 8, IDLE_MS / 4, IDLE_MS / 2, IDLE_MS, IDLE_MS] as const;

const WALLET: Statement = {
  name: 'gateway_wallet',
  text: 'SELECT balance, reserved FROM wallets WHERE owner_kind = $1 AND owner_id = $2',
};

// The headroom check keeps the sum inside BIGINT; no row means no wallet or an overflow.
const ADD_CREDIT: Statement = {
  name: 'gateway_add_credit',
  text: `WITH credited AS (
           UPDATE wallets SET balance = balance + $3::bigint
           WHERE owner_kind = $1 AND owner_id = $2 AND balance <= ${INT64_MAX} - $3::bigint
           RETURNING owner_kind, owner_id
         )
         INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, note, created_at)
         SELECT $4, owner_kind, owner_id, 'credit', $3::bigint, $5, $6::bigint FROM credited
         RETURNING *`,
};

// The conditional hold: the wallet UPDATE matches only while available ≥ amount.
const RESERVE: Statement = {
  name: 'gateway_reserve',
  text: `WITH held AS (
           UPDATE wallets SET reserved = reserved + $3::bigint
           WHERE owner_kind = $1 AND owner_id = $2 AND balance - reserved >= $3::bigint
           RETURNING owner_kind, owner_id
         )
         INSERT INTO reservations (id, owner_kind, owner_id, amount, request_id, status, holder_kind, holder_id, created_at, expires_at, key_id)
         SELECT $4, owner_kind, owner_id, $3::bigint, $5, 'open', $9, $8, $6::bigint, $7::bigint, $10 FROM held
         RETURNING *`,
};

// Closing the reservation first makes a second settle (or a racing release) find nothing. The
// charge is capped at the reservation (a hold is the most a request can cost, docs/billing.md,
// "Money caps") and at what the reservation plus the free balance covers, so the other open
// reservations stay covered. `locked` reads the wallet at its newest version (FOR UPDATE follows
// concurrent updates) for the ledger entry and the result; `moved` recomputes the same cap from the
// row it writes rather than reusing `locked.charged`, because PostgreSQL first builds the new row
// from the version the statement's snapshot saw and checks the wallet's CHECK constraints on it
// before following the update chain to the newest version and recomputing; a cap taken from a
// newer version could fail those checks on the stale attempt. On the row finally written both
// computations see the same locked version, so they agree.
const SETTLE: Statement = {
  name: 'gateway_settle',
  text: `WITH settled AS (
           UPDATE reservations SET status = 'settled', closed_at = $4::bigint
           WHERE id = $1 AND status = 'open'
           RETURNING owner_kind, owner_id, amount, request_id, key_id
         ), locked AS (
           SELECT w.owner_kind, w.owner_id, s.amount, s.request_id, s.key_id,
                  LEAST($2::bigint, s.amount, w.balance - w.reserved + s.amount) AS charged
           FROM wallets w JOIN settled s ON w.owner_kind = s.owner_kind AND w.owner_id = s.owner_id
           FOR UPDATE OF w
         ), moved AS (
           UPDATE wallets w
           SET balance = w.balance - LEAST($2::bigint, l.amount, w.balance - w.reserved + l.amount), reserved = w.reserved - l.amount
           FROM locked l WHERE w.owner_kind = l.owner_kind AND w.owner_id = l.owner_id
           RETURNING l.amount, l.charged
         ), entry AS (
           INSERT INTO ledger_entries (id, owner_kind, owner_id, kind, amount, reservation_id, request_id, created_at, key_id)
           SELECT $5, owner_kind, owner_id, 'charge', charged, $1, COALESCE($3, request_id), $4::bigint, key_id
           FROM locked WHERE charged > 0
         )
         SELECT amount, charged FROM moved`,
};

// A capped hold first locks the wallet: every hold and settlement of the owner takes that lock, so
// the sums read next (a fresh snapshot under READ COMMITTED) cannot change until the hold commits.
const LOCK_WALLET: Statement = {
  name: 'gateway_lock_wallet',
  text: 'SELECT balance, reserved FROM wallets WHERE owner_kind = $1 AND owner_id = $2 FOR UPDATE',
};

// What a key has spent since each of three times ($2, $3, $4), and what it holds open.
const KEY_SPEND: Statement = {
  name: 'gateway_key_spend',
  text: `SELECT
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = $1 AND kind = 'charge' AND created_at >= $2::bigint) AS since_a,
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = $1 AND kind = 'charge' AND created_at >= $3::bigint) AS since_b,
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE key_id = $1 AND kind = 'charge' AND created_at >= $4::bigint) AS since_c,
           (SELECT coalesce(sum(amount), 0) FROM reservations WHERE key_id = $1 AND status = 'open') AS held`,
};

// What an owner has been charged since each of three times; its open holds are its wallet's `reserved`.
const OWNER_SPEND: Statement = {
  name: 'gateway_owner_spend',
  text: `SELECT
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_kind = $1 AND owner_id = $2 AND kind = 'charge' AND created_at >= $3::bigint) AS since_a,
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_kind = $1 AND owner_id = $2 AND kind = 'charge' AND created_at >= $4::bigint) AS since_b,
           (SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE owner_kind = $1 AND owner_id = $2 AND kind = 'charge' AND created_at >= $5::bigint) AS since_c`,
};

const RELEASE: Statement = {
  name: 'gateway_release',
  text: `WITH released AS (
           UPDATE reservations SET status = 'released', closed_at = $2
           WHERE id = $1 AND status = 'open'
           RETURNING owner_kind, owner_id, amount
         ), moved AS (
           UPDATE wallets w SET reserved = w.reserved - r.amount
           FROM released r WHERE w.owner_kind = r.owner_kind AND w.owner_id = r.owner_id
         )
         SELECT count(*) AS released FROM released`,
};

/**
 * One statement that releases the open reservations `which` selects (a condition on a reservation
 * row) and returns their amounts to the wallets, reporting how many it released. SKIP LOCKED leaves
 * a reservation that a settle or another instance is closing right now to whoever closes it.
 * `before` and `after` are further CTEs around it (those after may read `released` and `totals`).
 */
export function releaseOpenReservations(input: {
  readonly name: string;
  readonly which: string;
  /** The parameter that carries the closing time, e.g. `$1`. */
  readonly closedAt: string;
  readonly before?: string;
  readonly after?: string;
}): Statement {
  return {
    name: input.name,
    text: `WITH ${input.before ? `${input.before}, ` : ''}released AS (
           UPDATE reservations SET status = 'released', closed_at = ${input.closedAt}
           WHERE id IN (
             SELECT id FROM reservations WHERE status = 'open' AND ${input.which} FOR UPDATE SKIP LOCKED
           ) AND status = 'open'
           RETURNING owner_kind, owner_id, amount
         ), totals AS (
           SELECT owner_kind, owner_id, sum(amount)::bigint AS amount, count(*) AS released
           FROM released GROUP BY owner_kind, owner_id
         ), moved AS (
           UPDATE wallets w SET reserved = w.reserved - t.amount
           FROM totals t WHERE w.owner_kind = t.owner_kind AND w.owner_id = t.owner_id
         )${input.after ? `, ${input.after}` : ''}
         SELECT coalesce(sum(released), 0) AS released FROM totals`,
  };
}

const RELEASE_EXPIRED = releaseOpenReservations({ name: 'gateway_release_expired', which: 'expires_at < $1', closedAt: '$1' });

const RESERVATION: Statement = { name: 'gateway_reservation', text: 'SELECT * FROM reservations WHERE id = $1' };

const ENTRIES: Statement = {
  name: 'gateway_ledger_entries',
  text: 'SELECT * FROM ledger_entries WHERE owner_kind = $1 AND owner_id = $2 ORDER BY id',
};

export interface PostgresLedger extends LedgerStore {
  /** Stops taking slices and gives back those held (wallet-leases.ts), waiting at most `waitMs`. */
  stopLeases(waitMs: number): Promise<void>;
}

/**
 * `instanceId` holds every reservation this store makes (see instances.ts). Plain holds and the
 * closings of the holds this instance made go through the wallet's group commit
 * (wallet-commits.ts); a capped hold, and the closing of a hold made elsewhere (a job's, taken
 * over by this instance), are single statements. With `leases`, the holds of this instance's own
 * requests on a busy wallet are decided against its slice of the wallet (wallet-leases.ts).
 */
export function postgresLedger(database: PostgresDatabase, now: () => number, instanceId: string, leases = false): PostgresLedger {
  const commits = new WalletCommits(database, now, instanceId);
  const slices = leases
    ? new CreditLeases({
        instanceId,
        now,
        requestCommit: (owner) => commits.poke(owner),
        wakeAfter: (delayMs, wake) => setTimeout(wake, delayMs).unref(),
      })
    : null;
  commits.leases = slices;
  /** The holds this instance made through the group commit and has not closed: their wallets. */
  const madeHere = new Map<string, { readonly owner: OwnerRef; readonly amount: Picos; readonly expiresAt: number; readonly own: boolean }>();

  /** Closes a hold of this instance in its wallet's group commit; undefined for a hold made elsewhere. */
  async function closeMadeHere(reservationId: string, cost: bigint | null, requestId: string | null) {
    const made = madeHere.get(reservationId);
    if (!made) return undefined;
    // Never above the reservation (docs/billing.md, "Money caps"); the commit caps it at the free balance too.
    const charge = cost !== null && cost > made.amount ? made.amount : cost;
    // Forgotten once closed, not before: a second closing meanwhile goes to the same commit.
    const closed = await commits.close(made.owner, { reservationId, cost: charge, requestId, entryId: timeOrderedId('led') });
    if (madeHere.delete(reservationId) && made.own) slices?.closedInDatabase(made.owner, made.amount);
    return closed;
  }

  const reserveValues = ({ owner, amount, requestId, expiresAt, holder = { kind: 'instance', id: instanceId }, keyId = null }: ReserveInput) => [
    owner.kind,
    owner.id,
    amount,
    timeOrderedId('res'),
    requestId,
    now(),
    expiresAt,
    holder.id,
    holder.kind,
    keyId,
  ];
  return {
    async addCredit(owner, amount, note = null) {
      checkAmount('credit', amount, 1n);
      const values = [owner.kind, owner.id, amount, timeOrderedId('led'), note, now()];
      const row = (await database.query(ADD_CREDIT, values)).rows[0];
      if (row) return ledgerEntryFromRow(row);
      if ((await database.query(WALLET, [owner.kind, owner.id])).rows.length === 0) {
        throw ownerNotFound(owner);
      }
      throw overflowError(owner);
    },

    async getBalance(owner) {
      return balanceFromRow((await database.query(WALLET, [owner.kind, owner.id])).rows[0]);
    },

    async reserve(input) {
      checkAmount('reservation', input.amount, 0n);
      const sliced = slices?.hold(input);
      if (sliced) return sliced;
      const { owner, amount, requestId, expiresAt, holder = { kind: 'instance', id: instanceId }, keyId = null } = input;
      const reservation = newReservation(input, holder, now());
      const request = {
        id: reservation.id,
        amount,
        requestId,
        holderKind: holder.kind,
        holderId: holder.id,
        createdAt: reservation.createdAt,
        expiresAt,
        keyId,
      };
      for (let attempt = 0; ; attempt++) {
        const outcome = await commits.hold(owner, request);
        if (outcome.granted) break;
        // Refused while slices of the wallet were out: they are recalled (this instance's own too),
        // and the hold is asked again once they have had the time to come back.
        if (!outcome.leased || attempt >= RECALL_RETRY_MS.length) return null;
        slices?.recall(owner);
        await new Promise((resolve) => setTimeout(resolve, RECALL_RETRY_MS[attempt]));
        const retried = slices?.hold(input);
        if (retried) return retried;
      }
      const own = holder.kind === 'instance' && holder.id === instanceId;
      madeHere.set(reservation.id, { owner, amount, expiresAt, own });
      if (own) slices?.heldInDatabase(owner, amount);
      return reservation;
    },

    async reserveCapped(input) {
      checkAmount('reservation', input.amount, 0n);
      if (input.caps.length === 0) {
        const reservation = await this.reserve(input);
        return reservation ? { reservation } : { refused: 'credit' };
      }
      const { owner } = input;
      return database.transaction(async (client) => {
        const wallet = (await client.query({ ...LOCK_WALLET, values: [owner.kind, owner.id] })).rows[0];
        if (!wallet) return { refused: 'credit' } as const;
        const times = capTimes(input.caps);
        const spentBy: { key?: Spent; organization?: Spent } = {};
        if (input.keyId && input.caps.some((cap) => cap.holder === 'key')) {
          const row = (await client.query({ ...KEY_SPEND, values: [input.keyId, ...times] })).rows[0];
          spentBy.key = { since: [bigintValue(row.since_a), bigintValue(row.since_b), bigintValue(row.since_c)], held: bigintValue(row.held) };
        }
        if (input.caps.some((cap) => cap.holder === 'organization')) {
          const row = (await client.query({ ...OWNER_SPEND, values: [owner.kind, owner.id, ...times] })).rows[0];
          spentBy.organization = { since: [bigintValue(row.since_a), bigintValue(row.since_b), bigintValue(row.since_c)], held: bigintValue(wallet.reserved) };
        }
        const refusal = firstRefusal(input.caps, input.amount, spentBy);
        if (refusal) return refusal;
        const row = (await client.query({ ...RESERVE, values: reserveValues(input) })).rows[0];
        return row ? { reservation: reservationFromRow(row) } : ({ refused: 'credit' } as const);
      });
    },

    async spentBy(holder, times) {
      if ('keyId' in holder) {
        const row = (await database.query(KEY_SPEND, [holder.keyId, ...times])).rows[0];
        return { since: [bigintValue(row.since_a), bigintValue(row.since_b), bigintValue(row.since_c)], held: bigintValue(row.held) };
      }
      const { owner } = holder;
      const row = (await database.query(OWNER_SPEND, [owner.kind, owner.id, ...times])).rows[0];
      const wallet = (await database.query(WALLET, [owner.kind, owner.id])).rows[0];
      return {
        since: [bigintValue(row.since_a), bigintValue(row.since_b), bigintValue(row.since_c)],
        held: wallet ? bigintValue(wallet.reserved) : 0n,
      };
    },

    async settle(reservationId, cost, requestId = null) {
      checkAmount('cost', cost, 0n);
      const sliced = slices?.close(reservationId, cost, requestId);
      if (sliced) {
        const written = await sliced;
        return written && settleOutcome(cost, written.amount, written.charged);
      }
      const closed = await closeMadeHere(reservationId, cost, requestId);
      if (closed !== undefined) return closed && settleOutcome(cost, closed.amount, closed.charged);
      const values = [reservationId, cost, requestId, now(), timeOrderedId('led')];
      const row = (await database.query(SETTLE, values)).rows[0];
      return row ? settleOutcome(cost, bigintValue(row.amount), bigintValue(row.charged)) : null;
    },

    async release(reservationId) {
      const sliced = slices?.close(reservationId, null, null);
      if (sliced) return (await sliced) !== null;
      const closed = await closeMadeHere(reservationId, null, null);
      if (closed !== undefined) return closed !== null;
      const { rows } = await database.query(RELEASE, [reservationId, now()]);
      return Number(rows[0].released) > 0;
    },

    async releaseExpired(at) {
      for (const [id, made] of madeHere) {
        if (made.expiresAt < at && madeHere.delete(id) && made.own) slices?.closedInDatabase(made.owner, made.amount);
      }
      const inSlices = slices?.releaseExpired(at) ?? 0;
      const { rows } = await database.query(RELEASE_EXPIRED, [at]);
      return inSlices + Number(rows[0].released);
    },

    async getReservation(reservationId) {
      const sliced = slices?.reservation(reservationId);
      if (sliced) return sliced;
      const row = (await database.query(RESERVATION, [reservationId])).rows[0];
      return row ? reservationFromRow(row) : null;
    },

    async listEntries(owner) {
      return (await database.query(ENTRIES, [owner.kind, owner.id])).rows.map(ledgerEntryFromRow);
    },

    async stopLeases(waitMs) {
      await slices?.stop(waitMs);
    },
  };
}
