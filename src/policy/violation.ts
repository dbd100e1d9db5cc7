/**
 * What policy reports: a rejected parameter, referenced in canonical terms. Policy knows no wire
 * format; each dialect names the reference in its client's terms (`max_completion_tokens`,
 * `messages[2].content[0]`, `response_format.json_schema.strict`) through a ParamNamer.
 */
import type { CanonicalParam, EmbeddingParam, ImageParam, VideoParam } from '../canonical/index.ts';
import { GatewayError } from '../core/errors.ts';

/** Request fields policy can reject: the protocol-level parameters plus a few request-wide ones. */
export type PolicyField = CanonicalParam | 'maxOutputTokens' | 'stream' | 'messages';

/** A provider option inside `extra_body`, as `<group>.<key>` (text, image and video requests). */
export interface ExtraBodyRef {
  readonly kind: 'extra-body';
  readonly path: string;
}

/** The references a text request (chat, messages, responses) can produce. */
export type TextParamRef =
  | { readonly kind: 'field'; readonly field: PolicyField }
  /** `strict: true` on the function tool at this index of `request.tools`. */
  | { readonly kind: 'tool-strict'; readonly toolIndex: number }
  /** The example inputs of the function tool at this index of `request.tools`. */
  | { readonly kind: 'tool-input-examples'; readonly toolIndex: number }
  /** `strict` of a JSON-schema response format. */
  | { readonly kind: 'response-format-strict' }
  /** An image part: canonical message index, part index, and the index inside a tool result. */
  | { readonly kind: 'image'; readonly messageIndex: number; readonly partIndex: number; readonly innerIndex?: number }
  | ExtraBodyRef;

/** The references an image or video request can produce (their APIs share one namer). */
export type MediaParamRef =
  /** A parameter of an image request. */
  | { readonly kind: 'image-field'; readonly field: ImageParam }
  /** A parameter of a video request. */
  | { readonly kind: 'video-field'; readonly field: VideoParam }
  | ExtraBodyRef;

/** The references an embeddings request can produce; `index` names one input of `input`. */
export type EmbeddingParamRef = { readonly kind: 'embedding-field'; readonly field: EmbeddingParam; readonly index?: number };

/** A rejected parameter of any kind of request, in canonical terms. */
export type ParamRef = TextParamRef | MediaParamRef | EmbeddingParamRef;

const TEXT_REF_KINDS = [
  'field',
  'tool-strict',
  'tool-input-examples',
  'response-format-strict',
  'image',
  'extra-body',
] as const satisfies readonly TextParamRef['kind'][];
const MEDIA_REF_KINDS = ['image-field', 'video-field', 'extra-body'] as const satisfies readonly MediaParamRef['kind'][];
const EMBEDDING_REF_KINDS = ['embedding-field'] as const satisfies readonly EmbeddingParamRef['kind'][];

export interface PolicyViolation {
  readonly ref: ParamRef;
  /** Builds the message from the parameter's name in the client's terms. */
  readonly message: (param: string) => string;
  /** `unsupported_parameter` by default (docs/chat-completions.md, rule 9); `invalid_value` for sizes. */
  readonly code?: 'unsupported_parameter' | 'invalid_value';
}

/** A dialect's naming of canonical references, built while decoding one request. */
export interface ParamNamer {
  name(ref: ParamRef): string;
}

/**
 * A namer that names only the references of its own kind of request; a reference of another kind
 * (which such a request never produces) is named `body`, so that no dialect spells out another
 * kind's parameters.
 */
function namerOf<Ref extends ParamRef>(kinds: readonly Ref['kind'][], name: (ref: Ref) => string): ParamNamer {
  const own = new Set<ParamRef['kind']>(kinds);
  return { name: (ref) => (own.has(ref.kind) ? name(ref as Ref) : 'body') };
}

export const textParamNamer = (name: (ref: TextParamRef) => string): ParamNamer => namerOf(TEXT_REF_KINDS, name);
export const mediaParamNamer = (name: (ref: MediaParamRef) => string): ParamNamer => namerOf(MEDIA_REF_KINDS, name);
export const embeddingParamNamer = (name: (ref: EmbeddingParamRef) => string): ParamNamer => namerOf(EMBEDDING_REF_KINDS, name);

export const fieldRef = (field: PolicyField): ParamRef => ({ kind: 'field', field });

export function notSupported(ref: ParamRef, why = 'is not supported by this model'): PolicyViolation {
  return { ref, message: (param) => `'${param}' ${why}.` };
}

/**
 * A value a protocol's wire format cannot express, found while translating: thrown by the protocol
 * with a canonical reference, and named in the client's terms by the pipeline (which knows the
 * dialect's ParamNamer). Protocols thus never know which dialect a request came from. Until it is
 * named it is an ordinary 400 with no `param`.
 */
export class RejectedParameter extends GatewayError {
  readonly violation: PolicyViolation;

  constructor(violation: PolicyViolation) {
    super({ code: violation.code ?? 'unsupported_parameter', status: 400, message: violation.message('') });
    this.violation = violation;
  }
}

/** A rejection with a fixed message (it does not mention the parameter's name). */
export function rejectParameter(field: PolicyField, message: string, code: PolicyViolation['code'] = 'unsupported_parameter'): RejectedParameter {
  return new RejectedParameter({ ref: fieldRef(field), message: () => message, code });
}

export const imageFieldRef = (field: ImageParam): ParamRef => ({ kind: 'image-field', field });

export const videoFieldRef = (field: VideoParam): ParamRef => ({ kind: 'video-field', field });

export const embeddingFieldRef = (field: EmbeddingParam, index?: number): ParamRef => ({
  kind: 'embedding-field',
  field,
  ...(index === undefined ? {} : { index }),
});

/** A value an image protocol's wire format cannot express (see `rejectParameter`). */
export function rejectImageParameter(field: ImageParam, message: string, code: PolicyViolation['code'] = 'unsupported_parameter'): RejectedParameter {
  return new RejectedParameter({ ref: imageFieldRef(field), message: () => message, code });
}
