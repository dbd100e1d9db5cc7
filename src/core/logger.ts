/**
 * The one logger type of the code below the HTTP shell (pipeline, jobs, storage, limits, routing,
 * webhooks): the little of a logger they use. pino and Fastify loggers fit it as they are; tests
 * pass a recording fake.
 */
export interface Logger {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
