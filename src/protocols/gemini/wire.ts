/**
 * The Gemini API generateContent wire format, REST camelCase (`@google/genai`
 * types). Request types are exact; response types are tolerant (every field optional, enums as
 * strings) because the API adds finish reasons and part kinds over time.
 * @see https://ai.google.dev/api/generate-content
 */

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

// ---- responses (tolerant) ----

export interface GeminiPartWire {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name?: string; args?: Record<string, unknown> | null; id?: string };
}

export interface GeminiGroundingMetadataWire {
  webSearchQueries?: string[] | null;
  searchEntryPoint?: { renderedContent?: string } | null;
  groundingChunks?: { web?: { uri?: string; title?: string } | null }[] | null;
  groundingSupports?:
    | {
        segment?: { startIndex?: number; endIndex?: number; partIndex?: number; text?: string } | null;
        groundingChunkIndices?: number[] | null;
      }[]
    | null;
}

export interface GeminiCandidateWire {
  content?: { role?: string; parts?: GeminiPartWire[] | null } | null;
  finishReason?: string | null;
  index?: number;
  groundingMetadata?: GeminiGroundingMetadataWire | null;
}

export interface GeminiUsageWire {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiErrorWire {
  code?: number;
  message?: string;
  status?: string;
}

/** A whole response, and equally one streamed chunk. */
export interface GeminiResponseWire {
  candidates?: GeminiCandidateWire[] | null;
  promptFeedback?: { blockReason?: string | null } | null;
  usageMetadata?: GeminiUsageWire | null;
  modelVersion?: string;
  responseId?: string;
  /** A failure reported inside a 200 stream: `data: {"error":{…}}`. */
  error?: GeminiErrorWire;
}
