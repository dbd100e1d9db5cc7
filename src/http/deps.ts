/**
 * Everything a route module needs, built once at start by main.ts (or by a test) and passed in:
 * no module reaches for a global.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { Authenticator } from '../auth/context.ts';
import type { Catalog } from '../catalog/types.ts';
import type { GatewayConfig } from '../config/schema.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { Outputs } from '../outputs/outputs.ts';
import type { Limiter } from '../limits/limiter.ts';
import type { EndpointHealth } from '../routing/endpoint-health.ts';
import type { RequestLogRecord } from '../storage/store.ts';
import type { AccessLog } from './access-log.ts';
import type { Drain } from './drain.ts';
import type { StreamsCut } from '../pipeline/pipeline.ts';
import type { Store } from '../storage/store.ts';
import type { Tracing } from '../telemetry/tracing.ts';
import type { StreamDecoding } from '../protocols/protocol.ts';

export interface AppDeps {
  readonly config: GatewayConfig;
  readonly store: Store;
  readonly catalog: Catalog;
  readonly logger: FastifyBaseLogger;
  /** The Prometheus registry GET /metrics serves; each app has its own (tests run several). */
  readonly metrics: Registry;
  readonly authenticator: Authenticator;
  /** Admin API bearer secret; the admin API is off when undefined. */
  readonly adminKey?: string;
  /** Environment the provider credentials are read from (process.env in production). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Milliseconds since the epoch; replaceable in tests. */
  readonly now: () => number;
  /** Background jobs: route modules submit, find and cancel them, and register their kind's handler. */
  readonly jobs: Jobs;
  /**
   * Stored output files and their signed URLs (docs/outputs.md): `storeOutputFiles` keeps a
   * request's files, `signedOutputUrl` makes the URL that serves one without an API key.
   */
  readonly outputs: Outputs;
  /** The counted limits of keys and organizations (docs/limits.md). */
  readonly limiter: Limiter;
  /** The breakers and observed figures of provider endpoints (docs/operations.md, "Circuit breakers"). */
  readonly health: EndpointHealth;
  /** The server's stop: draining, then its remaining streams cut (drain.ts). */
  readonly drain: Drain;
  /** The drain (http/drain.ts), where the pipeline's streams join the list a stopping server cuts. */
  readonly streamsCut: StreamsCut;
  /** One line per request at `info` (access-log.ts). */
  readonly accessLog: AccessLog;
  /** `accessLog.note`, where the pipeline looks for it. */
  readonly onRecord: (record: RequestLogRecord) => void;
  /** OpenTelemetry spans (docs/operations.md, "Tracing"); undefined when tracing is off. */
  readonly tracing?: Tracing;
  /** How upstream streams' text deltas are read (GATEWAY_STREAM_DECODING); `templates` when absent. */
  readonly streamDecoding?: StreamDecoding;
}
