/**
 * The dashboard's reads in a worker thread of their own (docs/dashboard.md, "What the dashboard
 * costs the gateway"): the thread holds the dashboard's connection (a read-only SQLite connection,
 * or PostgreSQL's dashboard pool), runs each statement it is sent under the time limit, and posts
 * back the rows, or the text a row format made of them (row-format.ts). So a long read, the
 * decoding of its rows and the page rendered from them cost the server's event loop nothing, and
 * the thread runs at the lowest CPU priority (dashboard-thread-serve.js). It starts with the first
 * read; one that failed or stopped takes its reads with it, and the next read starts another.
 */
import { Worker } from 'node:worker_threads';
import { errors } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { RowFormat } from './row-format.ts';
import type { Row } from './rows.ts';
import { UsageQueryTimeout } from './usage.ts';

export interface DashboardReader {
  /** Runs a read under the dashboard's time limit. */
  all(sql: string, values: readonly unknown[]): Promise<Row[]>;
  /** Runs a read the same way and makes its rows into text by `format` where they were read. */
  formatted(sql: string, values: readonly unknown[], format: RowFormat): Promise<string>;
  close(): Promise<void>;
}

/** Why a read failed, as the thread tells it (dashboard-thread-serve.js). */
export type ReadFailure = 'timed-out' | 'unavailable' | 'failed';

type Answer =
  | { readonly warning: string }
  | { readonly id: number; readonly rows: Row[] }
  | { readonly id: number; readonly text: string }
  | { readonly id: number; readonly error: string; readonly failure: ReadFailure };

export interface DashboardThreadOptions {
  /** The worker's script: it serves reads with serveDashboardReads (dashboard-thread-serve.js). */
  readonly script: URL;
  readonly workerData: unknown;
  /** The time limit, for the message of a read that ran past it. */
  readonly limitMs: number;
  /** Awaited before each read is sent (SQLite: the writes before it are committed). */
  readonly beforeRead?: () => Promise<void>;
  /** Where the thread's warnings go (a dropped idle connection). */
  readonly logger?: Logger;
}

export function openDashboardThread(options: DashboardThreadOptions): DashboardReader {
  let worker: Worker | null = null;
  let nextId = 0;
  const pending = new Map<number, { resolve: (result: Row[] | string) => void; reject: (error: Error) => void }>();

  const failed = (answer: { readonly error: string; readonly failure: ReadFailure }): Error => {
    if (answer.failure === 'timed-out') return new UsageQueryTimeout(`the query ran past its limit of ${options.limitMs} ms`);
    if (answer.failure === 'unavailable') return errors.storageUnavailable(new Error(answer.error));
    return new Error(answer.error);
  };

  function started(): Worker {
    if (worker) return worker;
    const thread = new Worker(options.script, { workerData: options.workerData });
    thread.unref();
    thread.on('message', (answer: Answer) => {
      if ('warning' in answer) return options.logger?.warn({}, answer.warning);
      const waiting = pending.get(answer.id);
      pending.delete(answer.id);
      if (pending.size === 0) thread.unref();
      if (!waiting) return;
      if ('rows' in answer) waiting.resolve(answer.rows);
      else if ('text' in answer) waiting.resolve(answer.text);
      else waiting.reject(failed(answer));
    });
    const gone = (error: Error) => {
      if (worker === thread) worker = null;
      for (const waiting of pending.values()) waiting.reject(error);
      pending.clear();
    };
    thread.on('error', gone);
    thread.on('exit', () => gone(new Error('the dashboard reader stopped')));
    worker = thread;
    return thread;
  }

  async function ask(sql: string, values: readonly unknown[], format?: RowFormat): Promise<Row[] | string> {
    await options.beforeRead?.();
    const thread = started();
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      thread.ref();
      thread.postMessage({ id, sql, values, format });
    });
  }

  return {
    all: (sql, values) => ask(sql, values) as Promise<Row[]>,
    formatted: (sql, values, format) => ask(sql, values, format) as Promise<string>,
    async close() {
      const thread = worker;
      if (!thread) return;
      const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
      thread.postMessage('stop');
      await exited;
    },
  };
}
