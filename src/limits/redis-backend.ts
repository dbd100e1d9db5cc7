/**
 * Counters in Redis, shared by every instance (docs/limits.md). Every operation of an event-loop
 * turn goes to Redis in one script call (script-batch.ts), which Redis runs atomically
 * (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/): an admission, the
 * tokens of a settled call and a freed slot each cost a share of one round trip.
 * The script does what gcra.ts and memory-backend.ts do, with the same integer arithmetic (Lua
 * numbers are doubles, exact below 2^53 like JavaScript's), on Redis's own clock (TIME), so that
 * instances whose clocks differ still drain one bucket alike.
 *
 * Per holder scope: `rpm:` and `tpm:` hashes hold a bucket's level (unit·ms) and time, and expire
 * once drained; `con:` is a sorted set of concurrent-request leases scored by their expiry.
 *
 * A failure (Redis unreachable, a slow answer) rejects at once rather than queueing: the limiter
 * then applies `rate_limits.on_backend_failure`.
 */
import type { Redis } from 'ioredis';
import type { LimitName } from '../core/errors.ts';
import type { Admission, AdmitRequest, CounterCheck, CounterReport, LimitBackend } from './backend.ts';
import { WINDOW_MS } from './gcra.ts';
import { answeredInTime, connected, connectRedis } from './redis-connection.ts';
import { type Batch, ScriptBatches } from './script-batch.ts';

/**
 * An absent field of an operation (no such limit, no lease). The fields themselves never hold ','
 * or ';': they are numbers, key indices, lease ids (base64url and a sequence) and job ids (base32).
 */
const NONE = '-';

// KEYS: the batch's distinct keys. ARGV[1]: the operations, separated by ';', each of
// comma-separated fields, the first naming it; a key is its index in KEYS. Returns the answers as
// one text, separated by ';' in the operations' order (one text to decode rather than nested
// arrays; an operation nobody awaits answers ''):
//   a,requests,lease,ttl then per check: rpm key,rpm,tpm key,tpm,con key,con — admit.
//     1, then per check and limit it has: remaining, reset ms (rpm), remaining, reset ms, level
//     (tpm), free slots (con); or 0, limit (1 requests, 2 tokens, 3 concurrent), check index,
//     retry after ms when refused.
//   t,tokens then per bucket: tpm key,tpm — adds settled tokens.
//   r,lease then the con keys — frees the lease's slots.
//   m,from,to,ttl then the con keys — moves a lease's slots to another (one that is gone moves nowhere).
const BATCH = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local W = ${WINDOW_MS}

local function fields(text)
  local list = {}
  for field in string.gmatch(text, '[^,]+') do list[#list + 1] = field end
  return list
end

local function ceil_div(a, b) return math.ceil(a / b) end

-- An answer as text: whole numbers, without the exponent form tostring gives large ones.
local function numbers(list)
  for i, value in ipairs(list) do list[i] = string.format('%.0f', value) end
  return table.concat(list, ',')
end

local function level_of(key, limit)
  local state = redis.call('HMGET', key, 'l', 't')
  local level = tonumber(state[1]) or 0
  local at = tonumber(state[2]) or now
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end
  local leaked = elapsed * limit
  if leaked >= level then return 0 end
  return level - leaked
end

local function set_level(key, level, limit)
  redis.call('HSET', key, 'l', string.format('%.0f', level), 't', now)
  redis.call('PEXPIRE', key, ceil_div(level, limit) + 1000)
end

local function admit(f)
  local requests = tonumber(f[2])
  local lease = f[3]
  local ttl = tonumber(f[4])
  local checks = (#f - 4) / 6
  local answer = {1}
  local updates = {}
  for i = 1, checks do
    local b = 4 + (i - 1) * 6
    local rpm, tpm, con = tonumber(f[b + 2]), tonumber(f[b + 4]), tonumber(f[b + 6])
    if rpm then
      local key = KEYS[tonumber(f[b + 1])]
      local level = level_of(key, rpm)
      local capacity = rpm * W
      local needed = level + requests * W
      if needed > capacity then
        return numbers({0, 1, i, ceil_div(math.min(needed - capacity, level), rpm)})
      end
      if requests > 0 then table.insert(updates, {key, needed, rpm}) end
      table.insert(answer, math.floor((capacity - needed) / W))
      table.insert(answer, ceil_div(needed, rpm))
    end
    if tpm then
      local level = level_of(KEYS[tonumber(f[b + 3])], tpm)
      local remaining = math.floor((tpm * W - level) / W)
      if remaining < 0 then remaining = 0 end
      table.insert(answer, remaining)
      table.insert(answer, ceil_div(level, tpm))
      table.insert(answer, level)
    end
    if con then
      local key = KEYS[tonumber(f[b + 5])]
      redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
      local used = redis.call('ZCARD', key)
      if lease ~= '-' then
        if used >= con then return numbers({0, 3, i, 1000}) end
        used = used + 1
      end
      local free = con - used
      if free < 0 then free = 0 end
      table.insert(answer, free)
    end
  end
  for _, update in ipairs(updates) do set_level(update[1], update[2], update[3]) end
  if lease ~= '-' then
    for i = 1, checks do
      local b = 4 + (i - 1) * 6
      if tonumber(f[b + 6]) then
        local key = KEYS[tonumber(f[b + 5])]
        redis.call('ZADD', key, now + ttl, lease)
        if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
      end
    end
  end
  return numbers(answer)
end

local function add_tokens(f)
  local tokens = tonumber(f[2])
  for i = 3, #f, 2 do
    local key, limit = KEYS[tonumber(f[i])], tonumber(f[i + 1])
    set_level(key, level_of(key, limit) + tokens * W, limit)
  end
  return ''
end

local function release(f)
  for i = 3, #f do redis.call('ZREM', KEYS[tonumber(f[i])], f[2]) end
  return ''
end

local function move(f)
  local ttl = tonumber(f[4])
  for i = 5, #f do
    local key = KEYS[tonumber(f[i])]
    if redis.call('ZREM', key, f[2]) == 1 then
      redis.call('ZADD', key, now + ttl, f[3])
      if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
    end
  end
  return ''
end

local operations = {a = admit, t = add_tokens, r = release, m = move}
local answers = {}
for text in string.gmatch(ARGV[1], '[^;]+') do
  local f = fields(text)
  answers[#answers + 1] = operations[f[1]](f)
end
return table.concat(answers, ';')
`;

const REFUSED_LIMITS: Record<number, LimitName> = { 1: 'requests_per_minute', 2: 'tokens_per_minute', 3: 'concurrent_requests' };

interface LimitCommands {
  gatewayLimits(numberOfKeys: number, keys: readonly string[], operations: string): Promise<string>;
}

export interface RedisBackendOptions {
  readonly url: string;
  /** Put before every key, so that several gateways (or test runs) can share one Redis. */
  readonly prefix: string;
}

/** The Redis keys of a check's counters (made once per check: checks are kept per API key). */
interface CheckKeys {
  readonly rpm: string;
  readonly tpm: string;
  readonly con: string;
}

export class RedisBackend implements LimitBackend {
  readonly kind = 'redis' as const;
  readonly #redis: Redis & LimitCommands;
  readonly #prefix: string;
  readonly #batches: ScriptBatches;
  readonly #keys = new WeakMap<CounterCheck, CheckKeys>();

  constructor(options: RedisBackendOptions) {
    // A check must not wait for a reconnection: it fails, and the failure mode decides.
    this.#redis = connectRedis<LimitCommands>(options.url, 'gatewayLimits', BATCH);
    this.#prefix = options.prefix;
    this.#batches = new ScriptBatches((keys, operations) =>
      answeredInTime(this.#redis.gatewayLimits(keys.length, keys, operations.join(';'))).then((answers) => answers.split(';')),
    );
  }

  admit(request: AdmitRequest): Promise<Admission> {
    const batch = this.#batches.current();
    let operation = `a,${request.requests},${request.lease?.id ?? NONE},${request.lease?.ttlMs ?? 0}`;
    for (const check of request.checks) {
      const keys = this.#keysOf(check);
      operation += `,${counter(batch, keys.rpm, check.requestsPerMinute)},${counter(batch, keys.tpm, check.tokensPerMinute)},${counter(batch, keys.con, check.concurrentRequests)}`;
    }
    return batch.call(operation, (answer) => admission(request.checks, (answer as string).split(',').map(Number)));
  }

  async ping(): Promise<void> {
    await answeredInTime(this.#redis.ping());
  }

  release(scopes: readonly string[], leaseId: string): Promise<unknown> | undefined {
    if (scopes.length === 0) return undefined;
    const batch = this.#batches.current();
    let operation = `r,${leaseId}`;
    for (const scope of scopes) operation += `,${batch.key(`${this.#prefix}con:${scope}`)}`;
    return batch.send(operation);
  }

  transfer(scopes: readonly string[], from: string, to: string, ttlMs: number): Promise<unknown> | undefined {
    if (scopes.length === 0) return undefined;
    const batch = this.#batches.current();
    let operation = `m,${from},${to},${ttlMs}`;
    for (const scope of scopes) operation += `,${batch.key(`${this.#prefix}con:${scope}`)}`;
    return batch.send(operation);
  }

  addTokens(checks: readonly CounterCheck[], tokens: number): Promise<unknown> | undefined {
    if (tokens <= 0 || !checks.some((check) => check.tokensPerMinute !== undefined)) return undefined;
    const batch = this.#batches.current();
    let operation = `t,${tokens}`;
    for (const check of checks) {
      if (check.tokensPerMinute !== undefined) operation += `,${batch.key(this.#keysOf(check).tpm)},${check.tokensPerMinute}`;
    }
    return batch.send(operation);
  }

  /** Resolves once the connection is up, or has failed (redis-connection.ts). */
  connected(): Promise<void> {
    return connected(this.#redis);
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }

  #keysOf(check: CounterCheck): CheckKeys {
    let keys = this.#keys.get(check);
    if (keys === undefined) {
      keys = { rpm: `${this.#prefix}rpm:${check.scope}`, tpm: `${this.#prefix}tpm:${check.scope}`, con: `${this.#prefix}con:${check.scope}` };
      this.#keys.set(check, keys);
    }
    return keys;
  }
}

/** A counter's two fields of an admission: its key's index and its limit, or two absent fields. */
function counter(batch: Batch, key: string, limit: number | undefined): string {
  return limit === undefined ? `${NONE},${NONE}` : `${batch.key(key)},${limit}`;
}

/** The script's answer to an admission (see BATCH), with the checks it was asked about. */
function admission(checks: readonly CounterCheck[], answer: readonly number[]): Admission {
  if (answer[0] === 0) return { admitted: false, limit: REFUSED_LIMITS[answer[1]], holder: checks[answer[2] - 1].holder, retryAfterMs: answer[3] };
  const reports: CounterReport[] = [];
  const tokenLevels: number[] = [];
  let at = 1;
  for (const { holder, requestsPerMinute, tokensPerMinute, concurrentRequests } of checks) {
    if (requestsPerMinute !== undefined) {
      reports.push({ limit: 'requests_per_minute', holder, max: requestsPerMinute, remaining: answer[at], resetMs: answer[at + 1] });
      at += 2;
    }
    if (tokensPerMinute !== undefined) {
      reports.push({ limit: 'tokens_per_minute', holder, max: tokensPerMinute, remaining: answer[at], resetMs: answer[at + 1] });
      tokenLevels.push(answer[at + 2]);
      at += 3;
    }
    if (concurrentRequests !== undefined) {
      reports.push({ limit: 'concurrent_requests', holder, max: concurrentRequests, remaining: answer[at], resetMs: 0 });
      at += 1;
    }
  }
  return { admitted: true, reports, tokenLevels };
}
