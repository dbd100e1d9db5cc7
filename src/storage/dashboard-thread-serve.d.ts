/** The types of dashboard-thread-serve.js, for the worker threads written in TypeScript. */
import type { ReadFailure } from './dashboard-thread.ts';
import type { Row } from './rows.ts';

export function warn(message: string): void;

export function serveDashboardReads(
  read: (sql: string, values: unknown[]) => Row[] | Promise<Row[]>,
  failureOf: (error: unknown) => ReadFailure,
  close: () => void | Promise<void>,
): void;
