/**
 * The blob store in PostgreSQL itself (storage/blobs.ts), so that every instance serves every stored
 * output with no shared folder. A blob is a row of `blobs` and its bytes rows of `blob_chunks`
 * (CHUNK_BYTES each), streamed both ways: a put inserts each chunk as it arrives, a get reads a few
 * chunks per query, so a large blob is never whole in memory.
 *
 * A put writes its chunks under a new blob row that has no key yet, then gives it the key in one
 * short transaction that deletes the blob it replaces: readers see the old blob or the whole new one,
 * and no transaction stays open while a slow source is read. A reader holds the blob's row id, so a
 * blob replaced or deleted while it is read ends its stream with an error, never with a mix. Rows
 * without a key that a crashed put left behind are removed by the sweep, like any old blob.
 */
import { Readable } from 'node:stream';
import type { BlobInfo, BlobStore, StoredBlob } from '../blobs.ts';
import { bodyChunks, checkBlobKey, checkBlobPrefix, checkContentType } from '../blobs.ts';
import type { Row } from '../rows.ts';
import type { PostgresDatabase, Statement } from './database.ts';

/** Bytes per chunk row: large enough for few rows, small enough to stream in little memory. */
export const CHUNK_BYTES = 256 * 1024;
/** Chunks fetched per query while a blob is read. */
const CHUNKS_PER_READ = 4;

const CREATE: Statement = {
  name: 'gateway_blobs_create',
  text: 'INSERT INTO blobs (key, content_type, size, created_at) VALUES (NULL, $1, 0, $2) RETURNING id',
};
const ADD_CHUNK: Statement = { name: 'gateway_blobs_add_chunk', text: 'INSERT INTO blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)' };
const DROP: Statement = { name: 'gateway_blobs_drop', text: 'DELETE FROM blobs WHERE id = $1' };
const BY_KEY: Statement = { name: 'gateway_blobs_by_key', text: 'SELECT id, key, content_type, size, created_at FROM blobs WHERE key = $1' };
const CHUNKS: Statement = {
  name: 'gateway_blobs_chunks',
  text: `SELECT seq, data FROM blob_chunks WHERE blob_id = $1 AND seq >= $2 ORDER BY seq LIMIT ${CHUNKS_PER_READ}`,
};
// The key's "C" collation orders it bytewise, so a prefix is a range of the primary key's index.
const LIST: Statement = {
  name: 'gateway_blobs_list',
  text: 'SELECT key, content_type, size, created_at FROM blobs WHERE key >= $1 AND key < $2 ORDER BY key',
};
const DELETE: Statement = { name: 'gateway_blobs_delete', text: 'DELETE FROM blobs WHERE key = $1' };
const SWEEP: Statement = {
  name: 'gateway_blobs_sweep',
  text: 'DELETE FROM blobs WHERE id IN (SELECT id FROM blobs WHERE created_at < $1 ORDER BY created_at LIMIT $2)',
};

/** Above every character a key can hold (storage/blobs.ts allows only ASCII). */
const AFTER_KEYS = '\x7f';

function infoOf(row: Row): BlobInfo {
  return { key: row.key as string, contentType: row.content_type as string, size: Number(row.size), createdAt: Number(row.created_at) };
}

/** The body cut into CHUNK_BYTES pieces (the last one shorter); an input chunk is copied only when it is joined to others. */
async function* rechunked(body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  for await (const input of body) {
    let piece = input;
    while (piece.length > 0) {
      const take = Math.min(piece.length, CHUNK_BYTES - pendingBytes);
      pending.push(piece.subarray(0, take));
      pendingBytes += take;
      piece = piece.subarray(take);
      if (pendingBytes === CHUNK_BYTES) {
        yield pending.length === 1 ? pending[0] : Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
      }
    }
  }
  if (pendingBytes > 0) yield pending.length === 1 ? pending[0] : Buffer.concat(pending);
}

export function postgresBlobs(database: PostgresDatabase, now: () => number): BlobStore {
  async function* chunksOf(id: string, size: number): AsyncGenerator<Buffer> {
    let seq = 0;
    let read = 0;
    while (read < size) {
      const { rows } = await database.query(CHUNKS, [id, seq]);
      if (rows.length === 0 || Number(rows[0].seq) !== seq) throw new Error('the blob was deleted or replaced while it was read');
      for (const row of rows) {
        if (Number(row.seq) !== seq) throw new Error('the blob was deleted or replaced while it was read');
        const data = row.data as Buffer;
        read += data.length;
        seq++;
        yield data;
      }
    }
  }

  return {
    async put(key, body, contentType, datedAt) {
      checkBlobKey(key);
      checkContentType(contentType);
      const createdAt = datedAt ?? now();
      const id = String((await database.query(CREATE, [contentType, createdAt])).rows[0].id);
      try {
        let seq = 0;
        let size = 0;
        for await (const chunk of rechunked(bodyChunks(body))) {
          // A view, not a copy: pg sends a Buffer as bytea.
          await database.query(ADD_CHUNK, [id, seq++, Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)]);
          size += chunk.length;
        }
        await database.transaction(async (client) => {
          // Two puts of one key at once take turns here, so the later one replaces the earlier.
          await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [key]);
          await client.query('DELETE FROM blobs WHERE key = $1', [key]);
          await client.query('UPDATE blobs SET key = $1, size = $2 WHERE id = $3', [key, size, id]);
        });
        return { key, size, contentType, createdAt };
      } catch (error) {
        await database.query(DROP, [id]).catch(() => undefined);
        throw error;
      }
    },
    async get(key): Promise<StoredBlob | null> {
      checkBlobKey(key);
      const row = (await database.query(BY_KEY, [key])).rows[0];
      if (row === undefined) return null;
      const info = infoOf(row);
      return { ...info, stream: Readable.from(chunksOf(String(row.id), info.size), { objectMode: false }) };
    },
    async list(prefix) {
      checkBlobPrefix(prefix);
      return (await database.query(LIST, [prefix, `${prefix}${AFTER_KEYS}`])).rows.map(infoOf);
    },
    async delete(key) {
      checkBlobKey(key);
      await database.query(DELETE, [key]);
    },
    async sweep(createdBefore, limit) {
      return (await database.query(SWEEP, [createdBefore, limit])).rowCount ?? 0;
    },
  };
}
