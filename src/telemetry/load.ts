/**
 * Starts tracing when the environment turns it on (./settings.ts). The OpenTelemetry SDK is
 * imported here and only here, on demand: a gateway without tracing never loads it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { TracingSettings } from './settings.ts';
import type { Tracing } from './tracing.ts';

export async function loadTracing(
  settings: TracingSettings | undefined,
  env: Readonly<Record<string, string | undefined>>,
  logger: FastifyBaseLogger,
): Promise<Tracing | undefined> {
  if (settings === undefined) return undefined;
  const { startOtelTracing } = await import('./otel-tracing.ts');
  return startOtelTracing(settings, env, logger);
}
