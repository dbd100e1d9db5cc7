/**
 * Provider credentials named by the config (`api_key_env`) but absent from the environment. Such a
 * provider starts like any other and fails every call with a 502, so the server names the
 * variables at start instead.
 */
import type { GatewayConfig } from './schema.ts';

export interface MissingCredential {
  readonly provider: string;
  readonly variable: string;
}

export function missingCredentials(config: GatewayConfig, env: Readonly<Record<string, string | undefined>>): MissingCredential[] {
  return config.providers.flatMap((provider) => {
    const variable = provider.api_key_env;
    if (variable === undefined || (env[variable] ?? '').trim() !== '') return [];
    return [{ provider: provider.id, variable }];
  });
}
