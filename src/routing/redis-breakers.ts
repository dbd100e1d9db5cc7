/**
 * The breakers of endpoints in Redis, shared by every instance (REDIS_URL): one instance's failures
 * and another's count in one window, and an endpoint opened by one is skipped by all. The script
 * does what breaker.ts does, on Redis's own clock (TIME); every operation of an event-loop turn goes
 * in one script call (limits/script-batch.ts), so recording an attempt costs a share of one round trip.
 *
 * Per endpoint, one hash `<prefix>breaker:<provider>:<model>`: `s` the state (0 closed, 1 open,
 * 2 half-open), `u` when the cool-down or the probe's claim ends, `n` the openings since it last
 * closed, and per bucket i of the window `e<i>` its epoch, `r<i>` its attempts, `f<i>` its failures.
 * It expires once idle for the window and two longest cool-downs.
 *
 * A failure (Redis unreachable, a slow answer) rejects: the caller keeps what it last knew.
 */
import type { Redis } from 'ioredis';
import type { RedisBackendOptions } from '../limits/redis-backend.ts';
import { answeredInTime, connected, connectRedis } from '../limits/redis-connection.ts';
import { ScriptBatches } from '../limits/script-batch.ts';
import { type BreakerSettings, type BreakerState, type BreakerView, WINDOW_BUCKETS } from './breaker.ts';
import type { BreakerBackend, ProbeClaim } from './breaker-backend.ts';

// KEYS: the batch's distinct keys. ARGV[1]: the operations, separated by ';': `o,key,failed`
// records an attempt (failed 1 or 0), `p,key` claims a probe, `g,key` reads. ARGV[2]: the settings,
// `window ms,min requests,failure rate %,cool-down ms,max cool-down ms`. Answers, separated by ';':
// `state,remaining ms,requests,failures`, and `,granted` (1 or 0) for a probe.
const BREAKERS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local s = {}
for value in string.gmatch(ARGV[2], '[^,]+') do s[#s + 1] = tonumber(value) end
local window_ms, min_requests, rate, cooldown, max_cooldown = s[1], s[2], s[3], s[4], s[5]
local B = ${WINDOW_BUCKETS}
local width = window_ms / B
local ttl = window_ms + 2 * max_cooldown

local function load(key)
  local fields = redis.call('HGETALL', key)
  local c = {s = 0, u = 0, n = 0}
  for i = 1, #fields, 2 do c[fields[i]] = tonumber(fields[i + 1]) end
  return c
end

local function window(c, epoch)
  local requests, failures = 0, 0
  for i = 0, B - 1 do
    local e = c['e' .. i]
    if e and e > epoch - B then
      requests = requests + (c['r' .. i] or 0)
      failures = failures + (c['f' .. i] or 0)
    end
  end
  return requests, failures
end

local function cooldown_of(c)
  local doublings = c.n - 1
  if doublings < 0 then doublings = 0 end
  return math.min(cooldown * 2 ^ doublings, max_cooldown)
end

local function clear_window(key, c)
  local fields = {}
  for i = 0, B - 1 do
    c['e' .. i] = nil
    fields[#fields + 1] = 'e' .. i
    fields[#fields + 1] = 'r' .. i
    fields[#fields + 1] = 'f' .. i
  end
  redis.call('HDEL', key, unpack(fields))
end

local function open(key, c)
  c.n = c.n + 1
  c.s = 1
  c.u = now + cooldown_of(c)
  clear_window(key, c)
  redis.call('HSET', key, 's', 1, 'u', string.format('%.0f', c.u), 'n', c.n)
end

local function close(key, c)
  c.s, c.u, c.n = 0, 0, 0
  clear_window(key, c)
  redis.call('HSET', key, 's', 0, 'u', 0, 'n', 0)
end

local function view(c)
  local requests, failures = window(c, math.floor(now / width))
  local remaining = 0
  if c.s ~= 0 then remaining = math.max(0, c.u - now) end
  return string.format('%d,%.0f,%d,%d', c.s, remaining, requests, failures)
end

local function record(key, failed)
  local c = load(key)
  if c.s ~= 0 then
    if not failed then close(key, c) elseif c.s == 2 then open(key, c) end
  else
    local epoch = math.floor(now / width)
    local slot = epoch % B
    if c['e' .. slot] ~= epoch then
      c['e' .. slot], c['r' .. slot], c['f' .. slot] = epoch, 0, 0
    end
    c['r' .. slot] = c['r' .. slot] + 1
    if failed then c['f' .. slot] = c['f' .. slot] + 1 end
    redis.call('HSET', key, 'e' .. slot, string.format('%.0f', epoch), 'r' .. slot, c['r' .. slot], 'f' .. slot, c['f' .. slot])
    local requests, failures = window(c, epoch)
    if failed and requests >= min_requests and failures * 100 >= rate * requests then open(key, c) end
  end
  redis.call('PEXPIRE', key, ttl)
  return view(c)
end

local function probe(key)
  local c = load(key)
  local granted = 0
  if c.s ~= 0 and now >= c.u then
    c.s = 2
    c.u = now + cooldown_of(c)
    granted = 1
    redis.call('HSET', key, 's', 2, 'u', string.format('%.0f', c.u))
    redis.call('PEXPIRE', key, ttl)
  end
  return view(c) .. ',' .. granted
end

local answers = {}
for text in string.gmatch(ARGV[1], '[^;]+') do
  local op, index, failed = string.match(text, '^(%a),(%d+),?(%d?)$')
  local key = KEYS[tonumber(index)]
  if op == 'o' then answers[#answers + 1] = record(key, failed == '1')
  elseif op == 'p' then answers[#answers + 1] = probe(key)
  else answers[#answers + 1] = view(load(key)) end
end
return table.concat(answers, ';')
`;

interface BreakerCommands {
  gatewayBreakers(numberOfKeys: number, ...keysAndArgs: string[]): Promise<string>;
}

const STATES: readonly BreakerState[] = ['closed', 'open', 'half_open'];

export class RedisBreakers implements BreakerBackend {
  readonly kind = 'redis' as const;
  readonly #redis: Redis & BreakerCommands;
  readonly #prefix: string;
  readonly #batches: ScriptBatches;

  /** `options.prefix` (GATEWAY_REDIS_PREFIX) is put before every key, as for the limits' counters. */
  constructor(options: RedisBackendOptions, settings: BreakerSettings) {
    this.#redis = connectRedis<BreakerCommands>(options.url, 'gatewayBreakers', BREAKERS);
    this.#prefix = `${options.prefix}breaker:`;
    const settingsArgument = [settings.windowMs, settings.minRequests, settings.failureRatePercent, settings.cooldownMs, settings.maxCooldownMs].join(',');
    this.#batches = new ScriptBatches((keys, operations) =>
      answeredInTime(this.#redis.gatewayBreakers(keys.length, ...keys, operations.join(';'), settingsArgument)).then((answers) => answers.split(';')),
    );
  }

  record(key: string, failed: boolean): Promise<BreakerView> {
    const batch = this.#batches.current();
    return batch.call(`o,${batch.key(this.#prefix + key)},${failed ? 1 : 0}`, (answer) => viewOf(answer as string));
  }

  claimProbe(key: string): Promise<ProbeClaim> {
    const batch = this.#batches.current();
    return batch.call(`p,${batch.key(this.#prefix + key)}`, (answer) => ({ granted: (answer as string).endsWith(',1'), view: viewOf(answer as string) }));
  }

  read(keys: readonly string[]): Promise<BreakerView[]> {
    const batch = this.#batches.current();
    return Promise.all(keys.map((key) => batch.call(`g,${batch.key(this.#prefix + key)}`, (answer) => viewOf(answer as string))));
  }

  /** Resolves once the connection is up, or has failed (redis-connection.ts). */
  connected(): Promise<void> {
    return connected(this.#redis);
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}

function viewOf(answer: string): BreakerView {
  const [state, remainingMs, requests, failures] = answer.split(',').map(Number);
  return { state: STATES[state], remainingMs, requests, failures };
}
