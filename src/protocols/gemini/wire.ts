/**
 * The Gemini API generateContent wire format, REST camelCase (`@google/genai`
 * types). Request types are exact; response types are tolerant (every field optional, enums as
 * strings) because the API adds finish reasons and part kinds over time.
 * @see https://ai.google.dev/api/generate-content
 */

import { type Static, Type } from '@sinclair/typebox';
import { Maybe, Partial, TokenCount } from '../wire-schema.ts';

// ---- request ----

export type GeminiPart =
  | { text: string; thought?: boolean; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { fileUri: string; mimeType?: string } }
  | { functionCall: { name: string; args: Record<string, unknown>; id?: string }; thoughtSignature?: string }
  | { functionResponse: { name: string; response: Record<string, unknown>; id?: string } };

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: Record<string, unknown>;
}

export type GeminiTool = { functionDeclarations: GeminiFunctionDeclaration[] } | { googleSearch: Record<string, never> };

export interface GeminiToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED'; allowedFunctionNames?: string[] };
}

export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseMimeType?: string;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

// ---- responses: checked against these schemas (../wire-schema.ts), only the fields read ----

const Text = Maybe(Type.String());
const Position = Maybe(Type.Integer({ minimum: 0 }));

const GeminiPartSchema = Partial({
  text: Text,
  thought: Maybe(Type.Boolean()),
  thoughtSignature: Text,
  functionCall: Maybe(Partial({ name: Text, args: Maybe(Type.Record(Type.String(), Type.Unknown())), id: Text })),
});
export type GeminiPartWire = Static<typeof GeminiPartSchema>;

const GeminiGroundingMetadataSchema = Partial({
  webSearchQueries: Maybe(Type.Array(Type.String())),
  searchEntryPoint: Maybe(Partial({ renderedContent: Text })),
  groundingChunks: Maybe(Type.Array(Partial({ web: Maybe(Partial({ uri: Text, title: Text })) }))),
  groundingSupports: Maybe(
    Type.Array(
      Partial({
        segment: Maybe(Partial({ startIndex: Position, endIndex: Position, partIndex: Position, text: Text })),
        groundingChunkIndices: Maybe(Type.Array(Type.Integer({ minimum: 0 }))),
      }),
    ),
  ),
});
export type GeminiGroundingMetadataWire = Static<typeof GeminiGroundingMetadataSchema>;

const GeminiCandidateSchema = Partial({
  content: Maybe(Partial({ role: Text, parts: Maybe(Type.Array(GeminiPartSchema)) })),
  finishReason: Text,
  index: Position,
  groundingMetadata: Maybe(GeminiGroundingMetadataSchema),
});
export type GeminiCandidateWire = Static<typeof GeminiCandidateSchema>;

export const GeminiUsageSchema = Partial({
  promptTokenCount: TokenCount,
  cachedContentTokenCount: TokenCount,
  candidatesTokenCount: TokenCount,
  thoughtsTokenCount: TokenCount,
  toolUsePromptTokenCount: TokenCount,
  totalTokenCount: TokenCount,
});
export type GeminiUsageWire = Static<typeof GeminiUsageSchema>;

/** An error object (read by errors.ts, which checks each field it uses). */
export interface GeminiErrorWire {
  code?: unknown;
  message?: unknown;
  status?: unknown;
}

/** A whole response, and equally one streamed chunk. */
export const GeminiResponseSchema = Partial({
  candidates: Maybe(Type.Array(GeminiCandidateSchema)),
  promptFeedback: Maybe(Partial({ blockReason: Text })),
  usageMetadata: Maybe(GeminiUsageSchema),
  modelVersion: Text,
  responseId: Text,
  /** A failure reported inside a 200 stream: `data: {"error":{…}}`. */
  error: Type.Optional(Type.Unknown()),
});
export type GeminiResponseWire = Static<typeof GeminiResponseSchema>;
