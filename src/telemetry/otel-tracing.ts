/**
 * Tracing with the OpenTelemetry SDK, exported over OTLP/HTTP. Loaded only when tracing is on
 * (./load.ts). Configured by the standard environment variables: the exporter reads its endpoint,
 * headers, timeout and compression itself (OTEL_EXPORTER_OTLP_*); here the resource
 * (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), the sampler (OTEL_TRACES_SAMPLER[_ARG]) and the
 * batch processor (OTEL_BSP_*) are read.
 *
 * No context manager and no global provider: every span is started with its parent's context
 * passed explicitly (the request's span travels with the call, ./tracing.ts), so nothing in the
 * process is patched and nothing runs for work that is not traced.
 */
import {
  type Context,
  DiagLogLevel,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  type BatchSpanProcessorOptions,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { FastifyBaseLogger } from 'fastify';
import { performance } from 'node:perf_hooks';
import type { RouteEndpoint } from '../catalog/types.ts';
import type { GatewayError } from '../core/errors.ts';
import type { RequestLogRecord } from '../storage/store.ts';
import { GEN_AI, operationName, providerName, recordAttributes } from './attributes.ts';
import type { TracingSettings } from './settings.ts';
import type { AttemptTrace, CallTrace, HandBackReason, JobCall, RequestTrace, TraceHeaders, Tracing } from './tracing.ts';

type Env = Readonly<Record<string, string | undefined>>;

export function startOtelTracing(settings: TracingSettings, env: Env, logger: FastifyBaseLogger): Tracing {
  // The SDK's own troubles (an export that failed) reach the gateway's log.
  diag.setLogger(
    {
      error: (message, ...args) => logger.warn({ args }, `tracing: ${message}`),
      warn: (message, ...args) => logger.warn({ args }, `tracing: ${message}`),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    DiagLogLevel.WARN,
  );
  const exporter = settings.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtobufExporter();
  const provider = new TracerProvider({
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the default name.
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'gateway' }).merge(detectResources({ detectors: [envDetector] })),
    sampler: samplerOf(env),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...batchOptions(env) })],
  });
  return new OtelTracing(provider.getTracer('gateway'), provider);
}

class OtelTracing implements Tracing {
  readonly #tracer: Tracer;
  readonly #provider: TracerProvider;

  constructor(tracer: Tracer, provider: TracerProvider) {
    this.#tracer = tracer;
    this.#provider = provider;
  }

  request(
    headers: Readonly<Record<string, string | string[] | undefined>>,
    method: string,
    route: string | null,
    path: string,
    requestId: string,
  ): RequestTrace {
    const parent = PROPAGATOR.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer.startSpan(
      route === null ? method : `${method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: path,
          ...(route !== null && { [ATTR_HTTP_ROUTE]: route }),
          'gateway.request_id': requestId,
        },
      },
      parent,
    );
    return new OtelCallTrace(this.#tracer, span, 'request');
  }

  job(call: JobCall): CallTrace {
    const linked =
      call.traceparent === undefined
        ? undefined
        : trace.getSpanContext(PROPAGATOR.extract(ROOT_CONTEXT, { traceparent: call.traceparent }, defaultTextMapGetter));
    const links: Link[] = linked === undefined ? [] : [{ context: linked }];
    const span = this.#tracer.startSpan(`job ${call.route}`, {
      kind: SpanKind.CONSUMER,
      links,
      attributes: { 'gateway.request_id': call.requestId, [GEN_AI.requestModel]: call.requestModel },
    });
    return new OtelCallTrace(this.#tracer, span, 'job');
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}

const PROPAGATOR = new W3CTraceContextPropagator();

function headersOf(span: Span): TraceHeaders {
  const carrier: Record<string, string> = {};
  PROPAGATOR.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
  return carrier;
}

/**
 * A call's span (a request's or a job's): it ends once its call is recorded and, for a request,
 * once its response is over; a job's span has no response to wait for.
 */
class OtelCallTrace implements RequestTrace {
  readonly #tracer: Tracer;
  readonly #span: Span;
  readonly #context: Context;
  #capability = 'chat';
  /** The provider kind of the latest attempt: the one that served, when the call was served. */
  #servedBy: RouteEndpoint['provider']['kind'] | undefined;
  #awaitingRecord = false;
  #responded: boolean;
  #ended = false;

  constructor(tracer: Tracer, span: Span, kind: 'request' | 'job') {
    this.#tracer = tracer;
    this.#span = span;
    this.#context = trace.setSpan(ROOT_CONTEXT, span);
    this.#responded = kind === 'job';
  }

  get traceparent(): string | undefined {
    return headersOf(this.#span).traceparent;
  }

  prepared(capability: string, requestModel: string): void {
    this.#capability = capability;
    this.#span.setAttributes({ [GEN_AI.operation]: operationName(capability), [GEN_AI.requestModel]: requestModel });
  }

  expectRecord(): void {
    this.#awaitingRecord = true;
  }

  attempt(endpoint: RouteEndpoint, capability: string, fallbackReason: string | undefined): AttemptTrace {
    this.#servedBy = endpoint.provider.kind;
    return new OtelAttempt(this.#tracer, this.#context, endpoint, capability, fallbackReason);
  }

  recorded(record: RequestLogRecord): void {
    this.#span.setAttributes(recordAttributes(record));
    this.#span.setAttribute(GEN_AI.operation, operationName(this.#capability));
    if (record.provider !== null && this.#servedBy !== undefined) this.#span.setAttribute(GEN_AI.provider, providerName(this.#servedBy));
    if (record.errorCode !== null) this.#span.setStatus({ code: SpanStatusCode.ERROR });
    this.#awaitingRecord = false;
    this.#endWhenDone();
  }

  handedBack(reason: HandBackReason): void {
    if (this.#ended) return;
    this.#span.setAttributes({ 'gateway.job.handed_back': true, 'gateway.job.handed_back.reason': reason });
    this.#awaitingRecord = false;
    this.#responded = true;
    this.#endWhenDone();
  }

  responded(statusCode: number): void {
    this.#span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
    // A server span is in error for a 5xx only: a 4xx is the client's (HTTP semantic conventions).
    if (statusCode >= 500) this.#span.setStatus({ code: SpanStatusCode.ERROR });
    this.#responded = true;
    this.#endWhenDone();
  }

  #endWhenDone(): void {
    if (this.#ended || !this.#responded || this.#awaitingRecord) return;
    this.#ended = true;
    this.#span.end();
  }
}

class OtelAttempt implements AttemptTrace {
  readonly headers: TraceHeaders;
  readonly #span: Span;
  readonly #startedAt = performance.now();
  #ended = false;

  constructor(tracer: Tracer, parent: Context, endpoint: RouteEndpoint, capability: string, fallbackReason: string | undefined) {
    const operation = operationName(capability);
    this.#span = tracer.startSpan(
      `${operation} ${endpoint.upstreamModel}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [GEN_AI.operation]: operation,
          [GEN_AI.provider]: providerName(endpoint.provider.kind),
          [GEN_AI.requestModel]: endpoint.upstreamModel,
          'gateway.provider.id': endpoint.provider.id,
          'gateway.endpoint': `${endpoint.provider.id}:${endpoint.upstreamModel}`,
          ...serverOf(endpoint.provider.base_url),
          ...(fallbackReason !== undefined && { 'gateway.fallback.reason': fallbackReason }),
        },
      },
      parent,
    );
    this.headers = headersOf(this.#span);
  }

  firstByte(): void {
    this.#span.setAttribute('gateway.first_byte_ms', performance.now() - this.#startedAt);
  }

  succeeded(outputTokens?: number): void {
    if (outputTokens !== undefined) this.#span.setAttribute(GEN_AI.outputTokens, outputTokens);
    this.#end('succeeded');
  }

  failed(error: GatewayError, cancelled: boolean): void {
    this.#span.setAttributes({ [ATTR_ERROR_TYPE]: error.code ?? error.type, 'gateway.attempt.status': error.status });
    if (!cancelled) this.#span.setStatus({ code: SpanStatusCode.ERROR });
    this.#end(cancelled ? 'cancelled' : 'failed');
  }

  abandoned(): void {
    this.#end('abandoned');
  }

  #end(outcome: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span.setAttribute('gateway.attempt.outcome', outcome);
    this.#span.end();
  }
}

/** `server.address` and `server.port` of a configured base URL (a protocol's default one is not known here). */
function serverOf(baseUrl: string | undefined): Record<string, string | number> {
  if (baseUrl === undefined) return {};
  try {
    const url = new URL(baseUrl);
    const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    return { [ATTR_SERVER_ADDRESS]: url.hostname, [ATTR_SERVER_PORT]: port };
  } catch {
    return {};
  }
}

/** OTEL_TRACES_SAMPLER and its argument, as the specification names them; parent-based always-on by default. */
function samplerOf(env: Env): Sampler {
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratioSampler = () => new TraceIdRatioBasedSampler(Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1);
  switch (env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on') {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratioSampler();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratioSampler() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The batch span processor's OTEL_BSP_* settings; each unset or invalid one keeps the SDK's default. */
function batchOptions(env: Env): Omit<BatchSpanProcessorOptions, 'exporter'> {
  const number = (name: string) => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isInteger(value) && value > 0 ? value : undefined;
  };
  return {
    scheduledDelayMillis: number('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: number('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
}
