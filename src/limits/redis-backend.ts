/**
 * Counters in Redis, shared by every instance (docs/limits.md): each admission is one Lua script,
 * so one round trip, run atomically by Redis (https://redis.io/docs/latest/develop/interact/programmability/eval-intro/).
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
import { Redis } from 'ioredis';
import type { LimitName } from '../core/errors.ts';
import type { Admission, AdmitRequest, CounterCheck, CounterReport, LimitBackend } from './backend.ts';
import { WINDOW_MS } from './gcra.ts';

/** How long a Redis command may take before the check counts as failed. */
const COMMAND_TIMEOUT_MS = 500;

// KEYS: three per check (rpm, tpm, con). ARGV: requests, tokens ('' = report only), lease id
// ('' = none), lease ttl, then four per check: holder, rpm, tpm, concurrent ('' = no such limit).
// Returns {1, kind, check index, max, remaining, resetMs, …} (kind 1 = requests, 2 = tokens,
// 3 = concurrent) when admitted,
// {0, limit (1 requests, 2 tokens, 3 concurrent), check index, retryAfterMs} when refused.
const ADMIT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local W = ${WINDOW_MS}
local requests = tonumber(ARGV[1])
local tokens = tonumber(ARGV[2])
local lease = ARGV[3]
local ttl = tonumber(ARGV[4])
local checks = #KEYS / 3

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

local function ceil_div(a, b) return math.ceil(a / b) end

local reports = {1}
local updates = {}
local function report(kind, index, max, remaining, reset)
  table.insert(reports, kind)
  table.insert(reports, index)
  table.insert(reports, max)
  table.insert(reports, remaining)
  table.insert(reports, reset)
end
for i = 1, checks do
  local base = 4 + (i - 1) * 4
  local rpm = tonumber(ARGV[base + 2])
  local tpm = tonumber(ARGV[base + 3])
  local con = tonumber(ARGV[base + 4])
  if rpm then
    local key = KEYS[(i - 1) * 3 + 1]
    local level = level_of(key, rpm)
    local capacity = rpm * W
    local needed = level + requests * W
    if needed > capacity then
      return {0, 1, i, ceil_div(math.min(needed - capacity, level), rpm)}
    end
    if requests > 0 then table.insert(updates, {key, needed, ceil_div(needed, rpm)}) end
    report(1, i, rpm, math.floor((capacity - needed) / W), ceil_div(needed, rpm))
  end
  if tpm then
    local level = level_of(KEYS[(i - 1) * 3 + 2], tpm)
    local capacity = tpm * W
    local needed = level + (tokens or 0) * W
    if tokens and needed > capacity then
      return {0, 2, i, ceil_div(math.min(needed - capacity, level), tpm)}
    end
    local remaining = math.floor((capacity - needed) / W)
    if remaining < 0 then remaining = 0 end
    report(2, i, tpm, remaining, ceil_div(level, tpm))
  end
  if con then
    local key = KEYS[(i - 1) * 3 + 3]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    local used = redis.call('ZCARD', key)
    if lease ~= '' and used >= con then
      return {0, 3, i, 1000}
    end
    if lease ~= '' then used = used + 1 end
    local free = con - used
    if free < 0 then free = 0 end
    report(3, i, con, free, 0)
  end
end
for _, update in ipairs(updates) do
  redis.call('HSET', update[1], 'l', string.format('%.0f', update[2]), 't', now)
  redis.call('PEXPIRE', update[1], update[3] + 1000)
end
if lease ~= '' then
  for i = 1, checks do
    if tonumber(ARGV[4 + (i - 1) * 4 + 4]) then
      local key = KEYS[(i - 1) * 3 + 3]
      redis.call('ZADD', key, now + ttl, lease)
      redis.call('PEXPIRE', key, ttl)
    end
  end
end
return reports
`;

// KEYS: the tpm buckets. ARGV: tokens, then each bucket's limit.
const ADD_TOKENS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local tokens = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local limit = tonumber(ARGV[i + 1])
  local state = redis.call('HMGET', key, 'l', 't')
  local level = tonumber(state[1]) or 0
  local at = tonumber(state[2]) or now
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end
  local leaked = elapsed * limit
  if leaked >= level then level = 0 else level = level - leaked end
  level = level + tokens * ${WINDOW_MS}
  redis.call('HSET', key, 'l', string.format('%.0f', level), 't', now)
  redis.call('PEXPIRE', key, math.ceil(level / limit) + 1000)
end
return 1
`;

// KEYS: the concurrency sets. ARGV: from, to, ttl. A lease that is gone (expired) moves nowhere.
const TRANSFER = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[3])
for _, key in ipairs(KEYS) do
  if redis.call('ZREM', key, ARGV[1]) == 1 then
    redis.call('ZADD', key, now + ttl, ARGV[2])
    if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
  end
end
return 1
`;

const REFUSED_LIMITS: Record<number, LimitName> = { 1: 'requests_per_minute', 2: 'tokens_per_minute', 3: 'concurrent_requests' };
const REPORTED_LIMITS: Record<number, CounterReport['limit']> = { 1: 'requests_per_minute', 2: 'tokens_per_minute', 3: 'concurrent_requests' };

interface LimitCommands {
  gatewayAdmit(numberOfKeys: number, ...args: (string | number)[]): Promise<number[]>;
  gatewayAddTokens(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
  gatewayTransfer(numberOfKeys: number, ...args: (string | number)[]): Promise<number>;
}

export interface RedisBackendOptions {
  readonly url: string;
  /** Put before every key, so that several gateways (or test runs) can share one Redis. */
  readonly prefix: string;
}

export class RedisBackend implements LimitBackend {
  readonly kind = 'redis' as const;
  readonly #redis: Redis & LimitCommands;
  readonly #prefix: string;

  constructor(options: RedisBackendOptions) {
    const redis = new Redis(options.url, {
      // A check must not wait for a reconnection: it fails, and the failure mode decides.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      lazyConnect: false,
      // Checks of concurrent requests share one write and one read per event-loop turn.
      enableAutoPipelining: true,
    });
    // Failures surface on the commands; without a listener ioredis would also print every one.
    redis.on('error', () => {});
    redis.defineCommand('gatewayAdmit', { lua: ADMIT });
    redis.defineCommand('gatewayAddTokens', { lua: ADD_TOKENS });
    redis.defineCommand('gatewayTransfer', { lua: TRANSFER });
    this.#redis = redis as Redis & LimitCommands;
    this.#prefix = options.prefix;
  }

  async admit(request: AdmitRequest): Promise<Admission> {
    const keys: string[] = [];
    const args: (string | number)[] = [request.requests, request.tokens ?? '', request.lease?.id ?? '', request.lease?.ttlMs ?? 0];
    for (const check of request.checks) {
      keys.push(this.#key('rpm', check), this.#key('tpm', check), this.#key('con', check));
      args.push(check.holder, check.requestsPerMinute ?? '', check.tokensPerMinute ?? '', check.concurrentRequests ?? '');
    }
    const reply = await this.#redis.gatewayAdmit(keys.length, ...keys, ...args);
    if (reply[0] === 0) {
      return { admitted: false, limit: REFUSED_LIMITS[reply[1]], holder: request.checks[reply[2] - 1].holder, retryAfterMs: reply[3] };
    }
    const reports: CounterReport[] = [];
    for (let index = 1; index + 4 < reply.length; index += 5) {
      reports.push({
        limit: REPORTED_LIMITS[reply[index]],
        holder: request.checks[reply[index + 1] - 1].holder,
        max: reply[index + 2],
        remaining: reply[index + 3],
        resetMs: reply[index + 4],
      });
    }
    return { admitted: true, reports };
  }

  async release(scopes: readonly string[], leaseId: string): Promise<void> {
    if (scopes.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const scope of scopes) pipeline.zrem(`${this.#prefix}con:${scope}`, leaseId);
    const results = await pipeline.exec();
    const failed = results?.find(([error]: [Error | null, unknown]) => error);
    if (failed) throw failed[0];
  }

  async transfer(scopes: readonly string[], from: string, to: string, ttlMs: number): Promise<void> {
    if (scopes.length === 0) return;
    await this.#redis.gatewayTransfer(scopes.length, ...scopes.map((scope) => `${this.#prefix}con:${scope}`), from, to, ttlMs);
  }

  async addTokens(checks: readonly CounterCheck[], tokens: number): Promise<void> {
    const counted = checks.filter((check) => check.tokensPerMinute !== undefined);
    if (counted.length === 0 || tokens <= 0) return;
    await this.#redis.gatewayAddTokens(
      counted.length,
      ...counted.map((check) => this.#key('tpm', check)),
      tokens,
      ...counted.map((check) => check.tokensPerMinute!),
    );
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }

  #key(kind: 'rpm' | 'tpm' | 'con', check: CounterCheck): string {
    return `${this.#prefix}${kind}:${check.scope}`;
  }
}
