/**
 * The job workers' settings (`jobs` in the config; docs/jobs.md), with their defaults.
 */
import type { GatewayConfig } from '../config/schema.ts';

export interface JobSettings {
  /** Jobs of `call` kinds (background responses) one instance runs at once. */
  readonly concurrency: number;
  /** Steps of `operation` jobs (a video's start, or one look at its operation) one instance runs at once. */
  readonly operationSteps: number;
  /** How long a claim lasts without a heartbeat before another instance may take the job over. */
  readonly leaseMs: number;
  /** How often an idle instance looks for queued jobs. */
  readonly pollIntervalMs: number;
  /**
   * How often a worker renews its leases, which is also how soon it notices that a job it runs was
   * cancelled on another instance: a cancel reaches the upstream call within this.
   */
  readonly heartbeatMs: number;
  /** How long background work stays retrievable, and how long its credit may stay held. */
  readonly lifetimeMs: number;
}

export const DEFAULT_JOB_CONCURRENCY = 16;
/** A step is one short upstream call: a few slots keep thousands of parked operations moving. */
export const DEFAULT_OPERATION_STEPS = 16;
export const DEFAULT_LEASE_SECONDS = 30;
export const DEFAULT_POLL_INTERVAL_MS = 500;
/** A cancel on another instance reaches the upstream call within this (the spec asks for a second). */
const HEARTBEAT_MS = 250;
/** Background responses and video jobs are kept, and retrievable, for 24 hours. */
export const JOB_LIFETIME_MS = 24 * 60 * 60 * 1000;

export function jobSettings(config: GatewayConfig): JobSettings {
  const leaseMs = (config.jobs?.lease_seconds ?? DEFAULT_LEASE_SECONDS) * 1000;
  return {
    concurrency: config.jobs?.concurrency ?? DEFAULT_JOB_CONCURRENCY,
    operationSteps: config.jobs?.operation_steps ?? DEFAULT_OPERATION_STEPS,
    leaseMs,
    pollIntervalMs: config.jobs?.poll_interval_ms ?? DEFAULT_POLL_INTERVAL_MS,
    heartbeatMs: Math.min(HEARTBEAT_MS, Math.floor(leaseMs / 3)),
    lifetimeMs: JOB_LIFETIME_MS,
  };
}
