/**
 * Shared pieces of the chat completion tests: configs on the built-in simulated provider, the
 * official client pointed at a test gateway, and ledger snapshots.
 */
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import type { CanonicalRequest } from '../../src/canonical/index.ts';
import { buildCatalog } from '../../src/catalog/catalog.ts';
import type { RouteEndpoint } from '../../src/catalog/types.ts';
import { decodeChatRequest } from '../../src/dialects/chat/decode.ts';
import type { ChatCompletionBody } from '../../src/dialects/chat/schema.ts';
import type { EndpointConfig, GatewayConfig, ModelConfig } from '../../src/config/schema.ts';
import { usdToPicos } from '../../src/core/money.ts';
import { pipelineFor } from '../../src/pipeline/pipeline.ts';
import type { Balance, LedgerEntry, OwnerRef } from '../../src/storage/store.ts';
import type { TestGateway } from '../helpers/gateway.ts';

/** Every capability of a text route but web search. */
export const TEXT_CAPABILITIES: NonNullable<EndpointConfig['capabilities']> = {
  streaming: true,
  tool_use: true,
  vision: true,
  json_mode: true,
  structured_outputs: true,
  json_mode_with_tools: true,
  sampling: true,
  parallel_tool_calls: true,
  reasoning: true,
  strict_tools: true,
};

export const FULL_CAPABILITIES: NonNullable<EndpointConfig['capabilities']> = { ...TEXT_CAPABILITIES, web_search: true, web_search_with_tools: true };

/** One simulated endpoint; fields not given take plain defaults (1 $/M in, 2 $/M out). */
export function endpoint(model: string, overrides: Partial<EndpointConfig> = {}): EndpointConfig {
  return {
    provider: 'sim',
    model,
    supply: 'first_party',
    training_use: 'never',
    pricing: { unit: 'per_1m_tokens', input_per_1m: 1, output_per_1m: 2 },
    capabilities: FULL_CAPABILITIES,
    limits: { max_tokens: 8192, context_window: 200000 },
    ...overrides,
  };
}

export function model(id: string, endpoints: EndpointConfig[], overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id,
    name: id,
    owned_by: 'tests',
    category: 'LLM',
    type: 'chat',
    input_modalities: ['text', 'image'],
    output_modalities: ['text'],
    endpoints,
    ...overrides,
  };
}

/** A config whose providers are all simulated, streaming without delay. */
export function simulatedConfig(models: ModelConfig[], extra: Partial<GatewayConfig> = {}): GatewayConfig {
  const providers = new Set(models.flatMap((entry) => entry.endpoints.map((route) => route.provider)));
  return {
    providers: [...providers].map((id) => ({ id, kind: 'simulated' as const, simulated: { chunk_delay_ms: 0 } })),
    models,
    ...extra,
  };
}

export function openai(gateway: TestGateway, apiKey = gateway.apiKey): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${gateway.baseUrl}/v1`, maxRetries: 0 });
}

export function ownerOf(gateway: TestGateway): OwnerRef {
  return { kind: 'account', id: gateway.account.id };
}

export interface LedgerSnapshot {
  readonly balance: Balance;
  readonly entries: readonly LedgerEntry[];
}

export async function ledger(gateway: TestGateway): Promise<LedgerSnapshot> {
  const owner = ownerOf(gateway);
  return { balance: await gateway.store.getBalance(owner), entries: await gateway.store.listEntries(owner) };
}

/** Charges added since `before`. */
export async function newCharges(gateway: TestGateway, before: LedgerSnapshot): Promise<LedgerEntry[]> {
  const known = new Set(before.entries.map((entry) => entry.id));
  return (await gateway.store.listEntries(ownerOf(gateway))).filter((entry) => entry.kind === 'charge' && !known.has(entry.id));
}

/**
 * Once the work's charge is in (a job charges after its end): exactly one new charge since `before`,
 * of `usd`, and nothing held.
 */
export function chargedOnce(gateway: TestGateway, before: LedgerSnapshot, usd: string): Promise<void> {
  return eventually(async () => {
    assert.deepEqual(
      (await newCharges(gateway, before)).map((charge) => charge.amount),
      [usdToPicos(usd)],
    );
    assert.equal((await ledger(gateway)).balance.reserved, 0n, 'nothing held');
  });
}

/** Writes the queued request log rows so a test can read them. */
export function flushRequestLog(gateway: TestGateway): Promise<void> {
  return pipelineFor(gateway.deps).flush();
}

/**
 * Polls until `check` passes (a settlement that runs after the client saw the end of a stream), or
 * throws its last failure after `timeoutMs`: a bound in time rather than in tries, and a generous
 * one, so that a busy machine only makes it take longer.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** USD per million tokens → pico-USD per token (exact for up to six decimals). */
export function picosPerToken(usdPerMillion: string): bigint {
  const [whole, fraction = ''] = usdPerMillion.split('.');
  return BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

/** The route the real catalog derives from one endpoint config (for unit tests of policy and billing). */
export function routeOf(config: EndpointConfig, capabilities?: EndpointConfig['capabilities']): RouteEndpoint {
  const catalog = buildCatalog(simulatedConfig([model('gateway/unit', [{ ...config, ...(capabilities ? { capabilities } : {}) }])]));
  return catalog.routes('gateway/unit', { communitySupply: true, trainingUse: true })[0];
}

/** A canonical request as the chat dialect decodes it. */
export function chatRequest(body: Partial<ChatCompletionBody> = {}): CanonicalRequest {
  return decodeChatRequest({ model: 'gateway/unit', messages: [{ role: 'user', content: 'hello' }], ...body }).request;
}
