/**
 * The embeddings body → the canonical embeddings request. The schema has checked the types; here
 * are the rules it cannot state well: an array is all strings, all token ids (one tokenized input)
 * or all arrays of token ids; no input is empty; at most MAX_EMBEDDING_INPUTS inputs.
 */
import type { CanonicalEmbeddingRequest, EmbeddingInput } from '../../canonical/index.ts';
import { errors } from '../../core/errors.ts';
import { embeddingParamNamer, type ParamNamer } from '../../policy/violation.ts';
import { fallbackModels, providerPreferences } from '../gateway-options.ts';
import { MAX_EMBEDDING_INPUTS, type EmbeddingsBody } from './schema.ts';

export interface DecodedEmbeddingsRequest {
  readonly request: CanonicalEmbeddingRequest;
  readonly names: ParamNamer;
  /** How the client wants the vectors: JSON numbers, or base64 of little-endian float32. */
  readonly encoding: 'float' | 'base64';
}

export function decodeEmbeddingsRequest(body: EmbeddingsBody): DecodedEmbeddingsRequest {
  return {
    request: {
      model: body.model,
      fallbackModels: fallbackModels(body),
      provider: providerPreferences(body),
      stream: false,
      inputs: decodeInputs(body.input),
      ...(body.dimensions === undefined ? {} : { dimensions: body.dimensions }),
      ...(body.user === undefined ? {} : { user: body.user }),
    },
    names: embeddingParamNames(typeof body.input === 'string' || typeof body.input[0] === 'number'),
    encoding: body.encoding_format ?? 'float',
  };
}

function decodeInputs(input: EmbeddingsBody['input']): EmbeddingInput[] {
  if (typeof input === 'string') {
    if (input === '') throw errors.invalidValue('input', "'input' must not be an empty string.");
    return [{ kind: 'text', text: input }];
  }
  if (input.length === 0) throw errors.invalidValue('input', "'input' must not be an empty array.");
  const first = input[0];
  // An array of token ids is one tokenized input.
  if (typeof first === 'number') {
    if (!input.every((item) => typeof item === 'number')) throw mixed();
    return [{ kind: 'tokens', tokens: input as number[] }];
  }
  if (input.length > MAX_EMBEDDING_INPUTS) {
    throw errors.invalidValue('input', `'input' has ${input.length} inputs; at most ${MAX_EMBEDDING_INPUTS} are taken in one request.`);
  }
  const form = typeof first;
  return input.map((item, index): EmbeddingInput => {
    if (typeof item !== form) throw mixed();
    if (typeof item === 'string') {
      if (item === '') throw errors.invalidValue(`input[${index}]`, `'input[${index}]' must not be an empty string.`);
      return { kind: 'text', text: item };
    }
    const tokens = item as number[];
    if (tokens.length === 0) throw errors.invalidValue(`input[${index}]`, `'input[${index}]' must not be an empty array.`);
    return { kind: 'tokens', tokens };
  });
}

function mixed() {
  return errors.invalidValue('input', "'input' must be all strings, all token ids, or all arrays of token ids; it mixes them.");
}

/**
 * Canonical references named as the embeddings API writes them (the canonical names are the API's):
 * `input[3]` for one input of an array, and plain `input` when the body holds one input (a string,
 * or one array of token ids).
 */
function embeddingParamNames(singleInput: boolean): ParamNamer {
  return embeddingParamNamer((ref) => {
    return ref.index === undefined || singleInput ? ref.field : `${ref.field}[${ref.index}]`;
  });
}
