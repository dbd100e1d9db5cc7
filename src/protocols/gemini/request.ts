/**
 * Canonical request → Gemini generateContent body (docs/protocols.md). Pure:
 * the same request and endpoint always give the same bytes.
 *
 * `base_url` is the API origin without a version (`https://generativelanguage.googleapis.com`); the
 * request goes to `${base_url}/v1beta/models/{model}:generateContent`, or
 * `:streamGenerateContent?alt=sse` for a stream (SSE rather than the default streamed JSON array).
 */
import type { CanonicalRequest, FunctionTool, ResponseFormat, ToolChoice } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { fieldRef, RejectedParameter } from '../../policy/violation.ts';
import { upstreamRequestBuilder } from '../upstream-request.ts';
import { geminiContents, geminiSystemInstruction } from './contents.ts';
import { geminiThinkingConfig } from './thinking.ts';
import type { GeminiGenerationConfig, GeminiRequestBody, GeminiTool, GeminiToolConfig } from './wire.ts';

export const buildGeminiRequest = upstreamRequestBuilder({
  defaultBaseUrl: 'https://generativelanguage.googleapis.com',
  path: geminiPath,
  credentialHeaders: (apiKey) => ({ 'x-goog-api-key': apiKey }),
  body: (request) => geminiBody(request),
  // Gemini's sampling options (topK, candidateCount, …) live in generationConfig.
  extraOptionsTarget: (body) => ((body as GeminiRequestBody).generationConfig ??= {}) as Record<string, unknown>,
});

function geminiPath(endpoint: RouteEndpoint, stream: boolean): string {
  // Model names are written either bare or as the API's resource name (`models/…`).
  const model = encodeURIComponent(endpoint.upstreamModel.replace(/^models\//, ''));
  return `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`;
}

export function geminiBody(request: CanonicalRequest): GeminiRequestBody {
  // The API has no switch for parallel calls; allowing them is its only behaviour.
  if (request.parallelToolCalls === false) {
    throw new RejectedParameter({ ref: fieldRef('parallelToolCalls'), message: (param) => `${param} is not supported by this model` });
  }
  const body: GeminiRequestBody = { contents: geminiContents(request) };
  const systemInstruction = geminiSystemInstruction(request);
  if (systemInstruction !== undefined) body.systemInstruction = systemInstruction;
  const tools = geminiTools(request);
  if (tools.length > 0) body.tools = tools;
  const toolConfig = geminiToolConfig(request.toolChoice, request.tools ?? []);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  const generationConfig = geminiGenerationConfig(request);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

function geminiTools(request: CanonicalRequest): GeminiTool[] {
  const tools: GeminiTool[] = [];
  if (request.tools !== undefined && request.tools.length > 0) tools.push({ functionDeclarations: request.tools.map(functionDeclaration) });
  // Grounding with Google Search is a built-in tool beside the function declarations.
  if (request.webSearch === true) tools.push({ googleSearch: {} });
  return tools;
}

function functionDeclaration(tool: FunctionTool) {
  return {
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    ...(tool.parameters !== undefined && { parametersJsonSchema: tool.parameters }),
  };
}

/**
 * Gemini has no per-tool strict flag; its VALIDATED mode (calls checked against the
 * declarations) serves strict tools when the model chooses, and ANY already constrains forced calls.
 */
function geminiToolConfig(choice: ToolChoice | undefined, tools: readonly FunctionTool[]): GeminiToolConfig | undefined {
  const strict = tools.some((tool) => tool.strict === true);
  if (choice === undefined) return strict ? { functionCallingConfig: { mode: 'VALIDATED' } } : undefined;
  switch (choice.kind) {
    case 'auto':
      return { functionCallingConfig: { mode: strict ? 'VALIDATED' : 'AUTO' } };
    case 'none':
      return { functionCallingConfig: { mode: 'NONE' } };
    case 'required':
      return { functionCallingConfig: { mode: 'ANY' } };
    case 'tool':
      return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
    default: {
      const unknown: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(unknown)}`);
    }
  }
}

function geminiGenerationConfig(request: CanonicalRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  if (request.maxOutputTokens !== undefined) config.maxOutputTokens = request.maxOutputTokens;
  if (request.stop !== undefined && request.stop.length > 0) config.stopSequences = [...request.stop];
  if (request.presencePenalty !== undefined) config.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) config.frequencyPenalty = request.frequencyPenalty;
  if (request.seed !== undefined) config.seed = request.seed;
  Object.assign(config, responseFormatConfig(request.responseFormat));
  const thinkingConfig = geminiThinkingConfig(request);
  if (thinkingConfig !== undefined) config.thinkingConfig = thinkingConfig;
  return config;
}

/** JSON output is a response media type, with the client's JSON Schema when it gave one. */
function responseFormatConfig(format: ResponseFormat | undefined): Pick<GeminiGenerationConfig, 'responseMimeType' | 'responseJsonSchema'> {
  switch (format?.kind) {
    case undefined:
    case 'text':
      return {};
    case 'json_object':
      return { responseMimeType: 'application/json' };
    case 'json_schema':
      return { responseMimeType: 'application/json', responseJsonSchema: format.schema };
    default: {
      const unknown: never = format;
      throw new Error(`unknown response format ${JSON.stringify(unknown)}`);
    }
  }
}
