/**
 * Whether tracing is on, from the standard OpenTelemetry environment variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/), read
 * without loading any OpenTelemetry package: off, the gateway never loads one.
 *
 * On when an OTLP endpoint is configured (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or `OTEL_TRACES_EXPORTER=otlp`; off when
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`, and by default. OTLP over HTTP only,
 * protobuf (the specification's default) or JSON.
 */

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export interface TracingSettings {
  readonly protocol: OtlpProtocol;
}

export class TracingSettingsError extends Error {
  override readonly name = 'TracingSettingsError';
}

const PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

/** undefined: tracing is off. */
export function tracingSettings(env: Readonly<Record<string, string | undefined>>): TracingSettings | undefined {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporters = value(env, 'OTEL_TRACES_EXPORTER')
    ?.split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (exporters !== undefined && exporters.length > 0) {
    if (exporters.includes('none')) return undefined;
    const other = exporters.find((name) => name !== 'otlp');
    if (other !== undefined) throw new TracingSettingsError(`OTEL_TRACES_EXPORTER: only 'otlp' (or 'none') is supported, got '${other}'`);
  } else if (value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') === undefined && value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') === undefined) {
    return undefined;
  }
  const protocol = value(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? value(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (!PROTOCOLS.includes(protocol as OtlpProtocol)) {
    throw new TracingSettingsError(`OTEL_EXPORTER_OTLP_PROTOCOL: one of ${PROTOCOLS.join(', ')} is supported, got '${protocol}'`);
  }
  return { protocol: protocol as OtlpProtocol };
}

function value(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const text = env[name]?.trim();
  return text === undefined || text === '' ? undefined : text;
}
