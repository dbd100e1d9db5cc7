/**
 * An OTLP/HTTP trace receiver on 127.0.0.1, for the tracing tests: it accepts what a gateway
 * exports to `/v1/traces` and keeps the spans. JSON requests (OTEL_EXPORTER_OTLP_PROTOCOL=http/json,
 * https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) are decoded into spans;
 * protobuf ones are counted, their bytes kept.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  /** The span contexts it links to. */
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  /** The resource's attributes (service.name…). */
  readonly resource: Readonly<Record<string, AttributeValue>>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

export interface OtlpReceiver {
  /** The value of OTEL_EXPORTER_OTLP_ENDPOINT (the exporter appends `/v1/traces`). */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  /** Protobuf export requests received (their bodies). */
  readonly protobufBodies: Buffer[];
  /** Resolves with the spans `select` picks once there are `count` of them (rejects after `timeoutMs`). */
  waitForSpans(select: (span: ReceivedSpan) => boolean, count: number, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const protobufBodies: Buffer[] = [];
  const server = createServer(async (request, response) => {
    const body = await readBody(request);
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    const type = request.headers['content-type'] ?? '';
    if (type.startsWith('application/json')) {
      spans.push(...decodeJson(JSON.parse(body.toString('utf8'))));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    } else {
      protobufBodies.push(body);
      // An empty ExportTraceServiceResponse.
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    protobufBodies,
    async waitForSpans(select, count, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.filter(select);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`${found.length} of ${count} spans arrived; received: ${spans.map((span) => span.name).join(', ')}`);
        await sleep(20);
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface JsonKeyValue {
  readonly key: string;
  readonly value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
}

function attributesOf(list: readonly JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) {
    if (value.stringValue !== undefined) attributes[key] = value.stringValue;
    else if (value.intValue !== undefined) attributes[key] = Number(value.intValue);
    else if (value.doubleValue !== undefined) attributes[key] = value.doubleValue;
    else if (value.boolValue !== undefined) attributes[key] = value.boolValue;
  }
  return attributes;
}

function decodeJson(document: any): ReceivedSpan[] {
  const decoded: ReceivedSpan[] = [];
  for (const resourceSpans of document.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        decoded.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map((link: { traceId: string; spanId: string }) => ({ traceId: link.traceId, spanId: link.spanId })),
          statusCode: span.status?.code ?? 0,
          resource,
        });
      }
    }
  }
  return decoded;
}
