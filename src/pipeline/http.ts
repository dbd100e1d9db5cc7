/**
 * The two HTTP concerns every dialect route shares: noticing that the client went away (so the
 * upstream call is aborted and a stream is settled for what was used), and sending server-sent
 * events with back-pressure.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** Aborted when the connection closes before the response was fully written. */
export function clientDisconnectSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * Streams pre-framed SSE text. Headers go out with the first frame, which the pipeline only
 * produces once an upstream route has answered, so a failure before that is still a plain JSON
 * error with its real status.
 */
export function sendEventStream(reply: FastifyReply, frames: AsyncIterable<string>): FastifyReply {
  return reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    // Reverse proxies must not buffer the stream.
    .header('x-accel-buffering', 'no')
    .send(Readable.from(frames, { objectMode: false }));
}
