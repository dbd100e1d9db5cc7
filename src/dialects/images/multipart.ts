/**
 * A multipart image edit read into the JSON edit's shape (files as base64), so that one schema
 * validates both forms and the Idempotency-Key hash covers every field and every file byte.
 *
 * Limits (docs/images.md, "Limits"), enforced while the body streams in, never after buffering it:
 * a declared Content-Length over 4 MiB is refused before a byte is read; otherwise the parser stops
 * as soon as the files and fields read pass 4 MiB; and a file whose base64 form would pass 5 MiB is
 * refused before it is converted.
 */
import type { FastifyRequest } from 'fastify';
import { errors, GatewayError } from '../../core/errors.ts';

export const MAX_MULTIPART_BYTES = 4 * 1024 * 1024;
export const MAX_BASE64_BYTES = 5 * 1024 * 1024;

const FILE_FIELDS = new Map([
  ['image', 'image'],
  ['image[]', 'image'],
  ['mask', 'mask'],
]);

/** Multipart limits for @fastify/multipart: no part may be larger than the whole body may be. */
export const MULTIPART_LIMITS = {
  fileSize: MAX_MULTIPART_BYTES,
  fieldSize: MAX_MULTIPART_BYTES,
  files: 2,
  fields: 16,
  parts: 18,
};

export async function readMultipartEdit(request: FastifyRequest): Promise<Record<string, unknown>> {
  try {
    return await readParts(request);
  } catch (error) {
    throw multipartError(error);
  }
}

/** The parser's own failures as the envelope's errors: its limits as 413, a malformed body as 400. */
function multipartError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if ((error as { statusCode?: unknown }).statusCode === 413) return errors.bodyTooLarge();
  const reason = error instanceof Error ? error.message : String(error);
  return errors.invalidValue(null, `The multipart/form-data body is malformed: ${reason}.`);
}

async function readParts(request: FastifyRequest): Promise<Record<string, unknown>> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_MULTIPART_BYTES) throw errors.bodyTooLarge();
  const body: Record<string, unknown> = {};
  let read = 0;
  const count = (bytes: number) => {
    read += bytes;
    if (read > MAX_MULTIPART_BYTES) throw errors.bodyTooLarge();
  };
  for await (const part of request.parts()) {
    count(Buffer.byteLength(part.fieldname));
    if (part.type === 'file') {
      const field = FILE_FIELDS.get(part.fieldname);
      if (field === undefined) {
        part.file.resume();
        throw errors.unrecognizedArgument(part.fieldname);
      }
      if (field in body) throw errors.invalidValue(field, `Send one '${field}' file.`);
      const chunks: Buffer[] = [];
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        count(chunk.length);
        chunks.push(chunk);
      }
      if (part.file.truncated) throw errors.bodyTooLarge();
      const file = Buffer.concat(chunks);
      if (Math.ceil(file.length / 3) * 4 > MAX_BASE64_BYTES) throw errors.bodyTooLarge();
      body[field] = file.toString('base64');
    } else {
      const value = String(part.value);
      count(Buffer.byteLength(value));
      if (part.fieldname in body) throw errors.invalidValue(part.fieldname, `Send '${part.fieldname}' once.`);
      // Form fields are text; `n` is the one number of an edit.
      body[part.fieldname] = part.fieldname === 'n' && /^\d{1,6}$/.test(value) ? Number(value) : value;
    }
  }
  return body;
}
