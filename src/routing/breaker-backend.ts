/** Where the breakers of endpoints live: this process (memory-breakers.ts) or Redis, shared by every instance (redis-breakers.ts). */
import type { BreakerView } from './breaker.ts';

export interface ProbeClaim {
  /** True: this attempt is the probe of a breaker whose cool-down is over. */
  readonly granted: boolean;
  readonly view: BreakerView;
}

export interface BreakerBackend {
  readonly kind: 'memory' | 'redis';
  /** Counts one attempt's outcome (breaker.ts, `countsAgainstEndpoint`); resolves to the breaker after it. */
  record(key: string, failed: boolean): Promise<BreakerView>;
  claimProbe(key: string): Promise<ProbeClaim>;
  read(keys: readonly string[]): Promise<BreakerView[]>;
  close(): Promise<void>;
}
