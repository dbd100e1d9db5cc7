/**
 * The breakers of this process's endpoints (no REDIS_URL): exact for one instance, each instance
 * its own otherwise.
 */
import { BreakerCell, type BreakerSettings, type BreakerView } from './breaker.ts';
import type { BreakerBackend, ProbeClaim } from './breaker-backend.ts';

export class MemoryBreakers implements BreakerBackend {
  readonly kind = 'memory' as const;
  readonly #cells = new Map<string, BreakerCell>();
  readonly #settings: BreakerSettings;
  readonly #now: () => number;

  constructor(settings: BreakerSettings, now: () => number = Date.now) {
    this.#settings = settings;
    this.#now = now;
  }

  async record(key: string, failed: boolean): Promise<BreakerView> {
    return this.#cell(key).record(this.#now(), failed, this.#settings);
  }

  async claimProbe(key: string): Promise<ProbeClaim> {
    const cell = this.#cell(key);
    const granted = cell.claimProbe(this.#now(), this.#settings);
    return { granted, view: cell.view(this.#now(), this.#settings) };
  }

  async read(keys: readonly string[]): Promise<BreakerView[]> {
    return keys.map((key) => this.#cell(key).view(this.#now(), this.#settings));
  }

  async close(): Promise<void> {}

  #cell(key: string): BreakerCell {
    let cell = this.#cells.get(key);
    if (cell === undefined) {
      cell = new BreakerCell();
      this.#cells.set(key, cell);
    }
    return cell;
  }
}
