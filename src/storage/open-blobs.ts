/**
 * Chooses the blob store of stored outputs at start (docs/outputs.md, "Where files are kept"):
 * - GATEWAY_BLOB_DIR set: that folder, which every instance must share;
 * - else PostgreSQL (DATABASE_URL): the database itself, so instances share nothing else;
 * - else the embedded default: `<GATEWAY_DATA_DIR>/blobs`.
 */
import { type BlobStore, createFileBlobStore, createFolderBlobStore } from './blobs.ts';
import type { Store } from './store.ts';

export function openBlobStore(input: {
  readonly store: Pick<Store, 'databaseBlobs'>;
  readonly dataDir: string;
  readonly blobDir: string | undefined;
  readonly now: () => number;
}): BlobStore {
  if (input.blobDir !== undefined) return createFolderBlobStore({ root: input.blobDir, now: input.now });
  return input.store.databaseBlobs ?? createFileBlobStore(input.dataDir, input.now);
}
