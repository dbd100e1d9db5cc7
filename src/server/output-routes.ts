/**
 * GET /v1/outputs/{requestId} and the signed file route (docs/outputs.md).
 *
 * - The stored request: the request log row of a chat, messages, responses or images request (kept
 *   24 hours), for the key's owner only; anyone else, an unknown or expired id, another endpoint's
 *   row and a video job's id get the same 404. Its files are signed afresh on each retrieval, valid
 *   10 minutes.
 * - The file route needs no API key: the signature (outputs/signing.ts) is the credential; it
 *   serves the files of a stored request, and those of a video job while the job lives. A
 *   tampered, foreign or traversing URL is a 403 `invalid_signature`, an expired one a 403
 *   `url_expired`. The file is streamed from the blob store with its content type.
 *
 * The text output (`output.json`) is not written as a blob on the answer's path: it is the JSON the
 * request log row keeps already (the body the client got), rendered when the file is served, so a
 * chat request pays no extra write (docs/outputs.md, "The text output").
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { errors } from '../core/errors.ts';
import { formatUsd } from '../core/money.ts';
import type { AppDeps } from '../http/deps.ts';
import type { RouteModule } from '../http/route-module.ts';
import { isPlainSegment, OUTPUT_JSON_NAME, outputFilePath, UNTRUSTED_FILE_POLICY } from '../outputs/outputs.ts';
import { checkSignature } from '../outputs/signing.ts';
import { pipelineFor } from '../pipeline/pipeline.ts';
import type { OwnerRef, RequestLogRecord } from '../storage/store.ts';

/** The request log's route names of the endpoints whose requests are stored, and their paths. */
const STORED_ENDPOINTS: Readonly<Record<string, string>> = {
  chat: '/v1/chat/completions',
  messages: '/v1/messages',
  responses: '/v1/responses',
  'images.generations': '/v1/images/generations',
  'images.edits': '/v1/images/edits',
  embeddings: '/v1/embeddings',
};

const OutputEntry = Type.Object({
  name: Type.String(),
  content_type: Type.String(),
  size: Type.Integer({ description: 'Bytes.' }),
  url: Type.String({ description: 'Signed URL serving the file without an API key until expires_at.' }),
  expires_at: Type.Integer({ description: 'Epoch seconds when url stops working.' }),
});

const StoredRequest = Type.Object({
  object: Type.Literal('stored_request'),
  id: Type.String({ description: 'The request id (x-gateway-request-id).' }),
  endpoint: Type.String(),
  model: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  http_status: Type.Integer(),
  created: Type.Integer({ description: 'Epoch seconds.' }),
  expires_at: Type.Integer({ description: 'Epoch seconds when the stored request and its files are deleted.' }),
  usage: Type.Object({
    input_tokens: Type.Integer(),
    cache_read_tokens: Type.Integer(),
    cache_write_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    reasoning_tokens: Type.Integer(),
    search_units: Type.Integer(),
  }),
  cost_usd: Type.String({ description: 'What was charged, an exact decimal.' }),
  outputs: Type.Array(OutputEntry),
});

const RequestParams = Type.Object({ requestId: Type.String() });
const FileParams = Type.Object({ requestId: Type.String(), name: Type.String() });
const FileQuery = Type.Object({ expires: Type.Optional(Type.String()), signature: Type.Optional(Type.String()) });

function sameOwner(a: OwnerRef, b: OwnerRef): boolean {
  return a.kind === b.kind && a.id === b.id;
}

/** The text output's bytes: the JSON the row keeps, as the client got it. */
function outputJson(row: RequestLogRecord): Buffer | null {
  return row.output === null || row.output === undefined ? null : Buffer.from(JSON.stringify(row.output), 'utf8');
}

export const outputRoutes: RouteModule = (app, deps) => {
  const authenticate = deps.authenticator.require('outputs');
  const pipeline = pipelineFor(deps);

  /**
   * The stored request's row, when it is one of a stored endpoint's and has not expired. Rows are
   * written in short batches (pipeline/request-log.ts): a miss flushes them once and looks again.
   */
  async function storedRow(requestId: string): Promise<RequestLogRecord | null> {
    if (!isPlainSegment(requestId)) return null;
    let row = await deps.store.getRequest(requestId);
    if (row === null) {
      await pipeline.flush();
      row = await deps.store.getRequest(requestId);
    }
    if (row === null || row.expiresAt <= deps.now() || STORED_ENDPOINTS[row.route] === undefined) return null;
    return row;
  }

  /** A video job's files are served under its id, while the job lives (docs/video.md). */
  async function isLiveVideoJob(id: string): Promise<boolean> {
    const job = await deps.store.getJob(id);
    return job !== null && job.kind === 'video' && job.expiresAt > deps.now();
  }

  app.get<{ Params: { requestId: string } }>(
    '/v1/outputs/:requestId',
    {
      schema: {
        summary: 'Retrieve a stored request and signed URLs of its outputs',
        tags: ['outputs'],
        params: RequestParams,
        response: { 200: StoredRequest },
      },
      onRequest: authenticate,
    },
    async (request) => {
      const { requestId } = request.params;
      const row = await storedRow(requestId);
      if (row === null || !sameOwner(row.owner, request.auth.owner)) throw errors.notFound('Stored request', requestId);
      // A video job is retrieved by its own endpoint, never here, whatever its id.
      if ((await deps.store.getJob(requestId))?.kind === 'video') throw errors.notFound('Stored request', requestId);
      return storedRequest(deps, row, deps.outputs.originOf(request));
    },
  );

  app.get<{ Params: { requestId: string; name: string }; Querystring: { expires?: string; signature?: string } }>(
    '/v1/outputs/:requestId/files/:name',
    {
      schema: {
        summary: 'Download a stored output file (signed URL, no API key)',
        // The signature is the credential: the API's key schemes do not apply here.
        security: [],
        tags: ['outputs'],
        params: FileParams,
        querystring: FileQuery,
      },
    },
    async (request, reply) => {
      const { requestId, name } = request.params;
      // A name or id that is not one plain segment (`..`, an encoded `/`) was never signed.
      if (!isPlainSegment(requestId) || !isPlainSegment(name)) throw errors.outputUrlInvalid();
      const check = checkSignature(deps.outputs.secret, outputFilePath(requestId, name), request.query.expires, request.query.signature, deps.now());
      if (check === 'invalid') throw errors.outputUrlInvalid();
      if (check === 'expired') throw errors.outputUrlExpired();
      const row = await storedRow(requestId);
      if (row === null && !(await isLiveVideoJob(requestId))) throw errors.notFound('Output file');
      return sendFile(deps, reply, requestId, row, name, Number(request.query.expires));
    },
  );
};

async function storedRequest(deps: AppDeps, row: RequestLogRecord, origin: string) {
  const now = deps.now();
  const files: { name: string; contentType: string; size: number }[] = [];
  const json = outputJson(row);
  if (json !== null) files.push({ name: OUTPUT_JSON_NAME, contentType: 'application/json', size: json.length });
  for (const blob of await deps.outputs.listOutputFiles(row.id)) {
    files.push({ name: blob.name, contentType: blob.contentType, size: blob.size });
  }
  return {
    object: 'stored_request' as const,
    id: row.id,
    endpoint: STORED_ENDPOINTS[row.route],
    model: row.model,
    status: row.status,
    http_status: row.httpStatus,
    created: Math.floor(row.createdAt / 1000),
    expires_at: Math.floor(row.expiresAt / 1000),
    usage: {
      input_tokens: row.inputTokens,
      cache_read_tokens: row.cacheReadTokens,
      cache_write_tokens: row.cacheWriteTokens,
      output_tokens: row.outputTokens,
      reasoning_tokens: row.reasoningTokens,
      search_units: row.searchUnits,
    },
    cost_usd: formatUsd(row.cost),
    outputs: files.map((file) => {
      const signed = deps.outputs.signedOutputUrl(origin, row.id, file.name, now);
      return { name: file.name, content_type: file.contentType, size: file.size, url: signed.url, expires_at: signed.expiresAt };
    }),
  };
}

/**
 * Streams one file of a stored request (`row`) or of a video job (no row); the URL's remaining
 * validity bounds how long a cache may keep it.
 */
async function sendFile(deps: AppDeps, reply: FastifyReply, id: string, row: RequestLogRecord | null, name: string, expiresAt: number): Promise<FastifyReply> {
  const maxAge = Math.max(0, expiresAt - Math.ceil(deps.now() / 1000));
  reply.header('cache-control', `private, max-age=${maxAge}`);
  // The bytes are an upstream's: never sniffed into something else, never run as a page.
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', UNTRUSTED_FILE_POLICY);
  if (name === OUTPUT_JSON_NAME) {
    const json = row === null ? null : outputJson(row);
    if (json === null) throw errors.notFound('Output file');
    return reply.type('application/json').send(json);
  }
  const blob = await deps.outputs.readOutputFile(id, name);
  if (blob === null) throw errors.notFound('Output file');
  return reply.type(blob.contentType).header('content-length', blob.size).send(blob.stream);
}
