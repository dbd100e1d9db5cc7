/**
 * What the end-to-end suites of the messages and responses dialects share: the real gateway over
 * two simulators of the protocol under test (or the built-in simulated provider, which has no
 * upstream and so no failure to inject), configured with the chat suite's models and prices
 * (chat-e2e.ts), an official client for it, and the faults injected mid-stream.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach } from 'node:test';
import type { ProviderConfig } from '../../src/config/schema.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { FALLBACK_MODEL, PRIMARY_TIMEOUT_MS, type ProtocolSimulator, SINGLE_MODEL } from './chat-e2e.ts';
import { chatModelsConfig, type E2EProvider } from './gateway-config.ts';
import type { Behaviour } from './harness.ts';

export interface DialectEndToEndSetup<S extends ProtocolSimulator> {
  readonly kind: ProviderConfig['kind'];
  /** Starts a simulator that requires credentials equal to `apiKey`; absent for the built-in simulated provider. */
  readonly startSimulator?: (apiKey: string) => Promise<S>;
}

export interface DialectEndToEndContext<S extends ProtocolSimulator, Client> {
  readonly gateway: TestGateway;
  readonly client: Client;
  /** Undefined for the built-in simulated provider. */
  readonly primary: S | undefined;
  readonly secondary: S | undefined;
}

/** Faults after six wire events, when text is flowing in every protocol's format (see chat-e2e.ts). */
export const MID_STREAM_FAULTS: readonly { readonly name: string; readonly behaviour: Behaviour }[] = [
  { name: "the provider's in-stream error event", behaviour: { kind: 'stream-error', afterEvents: 6 } },
  { name: 'a connection reset', behaviour: { kind: 'reset', afterEvents: 6 } },
];

/** The skip reason of a fault scenario, or false where faults can be injected. */
export function faultsUnavailable(setup: DialectEndToEndSetup<ProtocolSimulator>): string | false {
  return setup.startSimulator === undefined && 'the built-in simulated provider has no failure to inject';
}

/**
 * Registers the suite's hooks (start the simulators and the gateway, reset the simulators before
 * each test, stop everything after); returns a getter for the running context.
 */
export function dialectEndToEndGateway<S extends ProtocolSimulator, Client>(
  setup: DialectEndToEndSetup<S>,
  clientFor: (gateway: TestGateway) => Client,
): () => DialectEndToEndContext<S, Client> {
  let context: DialectEndToEndContext<S, Client> | undefined;
  const get = () => {
    assert.ok(context, 'the end-to-end gateway is not started');
    return context;
  };
  before(async () => {
    const primary = await setup.startSimulator?.('sk-primary');
    const secondary = await setup.startSimulator?.('sk-secondary');
    const provider = (id: string, sim: S | undefined, env: string): E2EProvider => ({ id, kind: setup.kind, baseUrl: sim?.baseUrl ?? '', apiKeyEnv: env });
    const first = { ...provider('primary', primary, 'PRIMARY_KEY'), timeoutMs: PRIMARY_TIMEOUT_MS };
    const config = chatModelsConfig({ [FALLBACK_MODEL]: [first, provider('secondary', secondary, 'SECONDARY_KEY')], [SINGLE_MODEL]: [first] });
    if (setup.startSimulator === undefined) {
      config.providers = config.providers.map((entry) => ({ id: entry.id, kind: 'simulated', simulated: { chunk_delay_ms: 0 } }));
    }
    const gateway = await startGateway({ config, env: { PRIMARY_KEY: 'sk-primary', SECONDARY_KEY: 'sk-secondary' }, creditUsd: '10' });
    context = { gateway, client: clientFor(gateway), primary, secondary };
  });
  beforeEach(() => {
    const { primary, secondary } = get();
    for (const sim of [primary, secondary]) sim?.setDefault({ kind: 'normal' });
  });
  after(async () => {
    await context?.gateway.close();
    await context?.primary?.close();
    await context?.secondary?.close();
  });
  return get;
}

/** The cost the gateway adds to a dialect's usage object (a Message's, a Response's, the final event's). */
export function costShown(usage: unknown): unknown {
  return (usage as { cost?: unknown } | undefined)?.cost;
}
