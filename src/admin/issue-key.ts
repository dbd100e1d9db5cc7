/**
 * Creates an API key for an owner: fresh key material, only the hash stored, the plaintext handed
 * back once. Shared by the admin API, the CLI, first-start seeding and the test helper.
 */
import { generateApiKey } from '../auth/keys.ts';
import type { ApiKeyRecord, DirectoryStore, KeyLimits, OwnerRef } from '../storage/store.ts';

export interface KeyRequest {
  readonly owner: OwnerRef;
  readonly name?: string | null;
  /** null or omitted = unrestricted. */
  readonly scopes?: readonly string[] | null;
  /** Canonical model ids; null or omitted = unrestricted. */
  readonly allowedModels?: readonly string[] | null;
  readonly limits?: KeyLimits | null;
}

export interface IssuedKey {
  readonly record: ApiKeyRecord;
  /** The only time the full key exists outside the client. */
  readonly plaintext: string;
}

export async function issueKey(store: DirectoryStore, request: KeyRequest): Promise<IssuedKey> {
  const material = generateApiKey();
  const record = await store.createKey({
    owner: request.owner,
    name: request.name ?? null,
    hash: material.hash,
    displayPrefix: material.displayPrefix,
    scopes: request.scopes ?? null,
    allowedModels: request.allowedModels ?? null,
    limits: request.limits ?? null,
  });
  return { record, plaintext: material.plaintext };
}
