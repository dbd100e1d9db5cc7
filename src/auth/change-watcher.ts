/**
 * Cross-instance invalidation: every admin change bumps the store's change-feed version; each
 * instance polls it and drops its caches when it moves, so a revocation or consent change made on
 * one instance is effective on every other within about one polling interval.
 */
import type { ChangeFeed } from '../storage/store.ts';

export interface ChangeWatcher {
  /** Stops polling; idempotent. */
  stop(): void;
}

export interface ChangeWatcherOptions {
  readonly intervalMs: number;
  readonly onChange: () => void;
  /** A failed poll keeps the caches (the store may be briefly away) and is reported here. */
  readonly onError: (error: unknown) => void;
}

export function watchChanges(feed: ChangeFeed, options: ChangeWatcherOptions): ChangeWatcher {
  let lastSeen: number | undefined;
  let polling = false;
  let stopped = false;

  const poll = async () => {
    if (polling || stopped) return;
    polling = true;
    try {
      const version = await feed.currentVersion();
      if (lastSeen !== undefined && version !== lastSeen && !stopped) options.onChange();
      lastSeen = version;
    } catch (error) {
      options.onError(error);
    } finally {
      polling = false;
    }
  };

  void poll();
  const timer = setInterval(poll, options.intervalMs);
  // Polling alone never keeps the process alive.
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
