/** The shape of bench/results/latest.json: everything one run measured, in absolute figures. */
import type { LongOperationsResult } from './long-operations.ts';
import type { ClosedLoopResult } from './load.ts';
import type { PacedResult } from './paced.ts';
import type { JobsResult } from './jobs.ts';
import type { LimitsAbResult } from './limits-ab.ts';
import type { RaceResult } from './race.ts';
import type { ScaleOutResult } from './scale-out.ts';
import type { DashboardListsResult } from './dashboard-lists.ts';
import type { DashboardUsageResult } from './dashboard-usage.ts';
import type { ChatBesideDashboardResult } from './chat-beside-dashboard.ts';
import type { ConcurrentStreamsResult } from './streams.ts';
import type { TtfbResult } from './ttfb.ts';
import type { WorkloadId } from './workloads.ts';

/** The two baselines, the process under test, and the optional peer. */
export type TargetName = 'direct' | 'bare-proxy' | 'gateway' | 'portkey';
export const TARGETS: readonly TargetName[] = ['direct', 'bare-proxy', 'gateway', 'portkey'];

/** A measurement, or why it is missing. */
export type Measured<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export interface TargetFigures {
  readonly saturation?: Measured<ClosedLoopResult>;
  /**
   * CPU the process used during the saturation run: per request, and as a share of its one core.
   * A share well below 1 means the load side, not this process, set the saturation figure.
   */
  readonly saturationCpu?: {
    readonly microsPerRequest: number;
    readonly utilization: number;
    /** The part of that CPU spent in the kernel (network, file writes). */
    readonly systemShare: number;
  } | null;
  readonly concurrencyOne?: Measured<ClosedLoopResult>;
  readonly paced?: Measured<PacedResult>;
  /** Peak resident memory of the process during the workload (not measured for `direct`). */
  readonly peakRssBytes?: number | null;
}

export interface WorkloadResult {
  readonly id: WorkloadId;
  readonly title: string;
  /** Why the gateway (or the peer) was not measured on this workload, when it was not. */
  readonly skipped: Partial<Record<TargetName, string>>;
  readonly targets: Partial<Record<TargetName, TargetFigures>>;
}

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly os: string;
  readonly node: string;
  readonly placement: string;
  /** One-minute load average when the run started: above ~0.5, something else shared the CPUs. */
  readonly loadAverageAtStart: number;
}

/** One bar (docs/performance.md) checked against this run; met is null when the run could not measure it. */
export interface BarCheck {
  readonly bar: string;
  readonly measured: string;
  readonly met: boolean | null;
}

export interface BenchResults {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly mode: 'full' | 'quick';
  readonly machine: MachineInfo;
  readonly settings: {
    readonly saturationConnections: number;
    readonly pacedRate: number;
    readonly upstreamDelayMs: number;
    /** Where the gateway's SQLite file lived. */
    readonly dataRoot: string;
    readonly durations: Readonly<Record<string, number>>;
  };
  readonly notes: readonly string[];
  /** Resident memory right after start, before any load. */
  readonly idleRssBytes: Partial<Record<TargetName, number | null>>;
  readonly workloads: readonly WorkloadResult[];
  /** Time to first byte of a stream whose first text leaves the simulator at once. */
  readonly ttfb: { readonly skipped: Partial<Record<TargetName, string>>; readonly targets: Partial<Record<TargetName, Measured<TtfbResult>>> } | null;
  /** Background responses submitted and completed per second (gateway only; docs/jobs.md). */
  readonly backgroundJobs: Measured<JobsResult> | null;
  /** Video jobs submitted and completed per second, and their CPU (gateway only; docs/video.md). */
  readonly videoJobs?: Measured<JobsResult> | null;
  /** Video generations of a minute in flight beside background responses (bench/long-operations.ts). */
  readonly longOperations?: Measured<LongOperationsResult> | null;
  /** What key limits cost on chat, A/B on one gateway (bench/limits-ab.ts). */
  readonly limitsAb?: Measured<LimitsAbResult> | null;
  /** One busy account on PostgreSQL (one and two instances) against the embedded store. */
  readonly scaleOut?: Measured<ScaleOutResult> | null;
  /** Four instances racing for one 1 USD wallet and one key's limits (bench/race.ts). */
  readonly race?: Measured<RaceResult> | null;
  /** The dashboard's list pages at two table sizes, on both stores (bench/dashboard-lists.ts). */
  readonly dashboardLists?: Measured<DashboardListsResult> | null;
  /** Usage analytics and request rows over 1,000,000 request rows, on both stores (bench/dashboard-usage.ts). */
  readonly dashboardUsage?: Measured<DashboardUsageResult> | null;
  /** Chat at the paced rate with and without dashboard reads beside it (bench/chat-beside-dashboard.ts). */
  readonly chatBesideDashboard?: Measured<ChatBesideDashboardResult> | null;
  readonly concurrentStreams: {
    readonly skipped: Partial<Record<TargetName, string>>;
    readonly targets: Partial<Record<TargetName, Measured<ConcurrentStreamsResult>>>;
  } | null;
  readonly bars: readonly BarCheck[];
}
