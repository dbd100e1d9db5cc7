/**
 * A JSON body sent as its pieces, in order, rather than copied into one buffer: the JSON text
 * around each large value, and that value's bytes where they already are. An image answer forwards
 * the upstream's base64 (a quarter of a megabyte and more) from the upstream's own buffer. A copy
 * of it was about a quarter of the buffers an image request allocates outside V8's heap, and those
 * buffers are what starts the process's full collections under image traffic (docs/performance.md,
 * "An image answer sent as its pieces").
 *
 * Fastify sends it as a stream body (it has `pipe`): the reply's hooks run as for any body, its
 * length goes in `content-length`, and the pieces go to the response corked, so one write.
 */
import { EventEmitter } from 'node:events';
import type { Writable } from 'node:stream';

/** JSON text (written as UTF-8), or bytes written as they are. */
export type JsonPiece = string | Uint8Array;

/** What the pieces are written to: the response, or any writable stream. */
export type PiecesSink = Pick<Writable, 'write' | 'end' | 'cork' | 'uncork'>;

export class JsonPieces extends EventEmitter {
  readonly #pieces: readonly JsonPiece[];
  /** The body's length in bytes. */
  readonly byteLength: number;

  constructor(pieces: readonly JsonPiece[]) {
    super();
    this.#pieces = pieces;
    let length = 0;
    for (const piece of pieces) length += typeof piece === 'string' ? Buffer.byteLength(piece) : piece.byteLength;
    this.byteLength = length;
  }

  /** Writes the pieces to `sink` and ends it (Fastify calls this once, after the reply's hooks). */
  pipe<Sink extends PiecesSink>(sink: Sink): Sink {
    sink.cork();
    for (const piece of this.#pieces) sink.write(piece);
    sink.uncork();
    // `end` first: Fastify destroys a body that has not ended when the response finishes.
    this.emit('end');
    sink.end();
    return sink;
  }

  /** Nothing to stop: the pieces are written in one step. */
  destroy(): void {}

  /** The body as one buffer (a replay's stored copy; tests). */
  toBuffer(): Buffer {
    return Buffer.concat(this.#pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
  }
}
