/**
 * The little of a logger the storage layer needs. pino and Fastify loggers fit it as they are; tests
 * pass a recording fake.
 */
export interface StorageLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: StorageLogger = {
  info() {},
  warn() {},
  error() {},
};
