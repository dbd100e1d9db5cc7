/**
 * Canonical request → Anthropic Messages body (docs/protocols.md). Pure: the
 * same request and endpoint always give the same bytes.
 *
 * `base_url` is what the official Anthropic SDK calls its base URL: the origin without `/v1`
 * (`https://api.anthropic.com`); the request goes to `${base_url}/v1/messages`.
 */
import type { CanonicalRequest, FunctionTool, ResponseFormat, ToolChoice } from '../../canonical/index.ts';
import type { RouteEndpoint } from '../../catalog/types.ts';
import { maxOutputTokens } from '../../catalog/request-bounds.ts';
import { upstreamRequestBuilder } from '../upstream-request.ts';
import { applyCacheOption } from './cache.ts';
import { anthropicMessages, anthropicSystem } from './conversation.ts';
import { anthropicReasoning } from './thinking.ts';
import { anthropicWebSearchTool } from './web-search.ts';
import type { AnthropicRequestBody, AnthropicTextBlock, AnthropicTool, AnthropicToolChoice, AnthropicWebSearchTool } from './wire.ts';

/** The long-standing API version; every field the gateway sends is accepted under it. */
export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The messages format has no JSON mode. A `json_object` request is served best-effort by an
 * instruction (docs/chat-completions.md, rule 7: without strict, JSON output is best effort).
 */
export const JSON_OBJECT_INSTRUCTION = 'Respond with a single valid JSON object and nothing else.';

export const buildAnthropicRequest = upstreamRequestBuilder({
  defaultBaseUrl: 'https://api.anthropic.com',
  path: () => '/v1/messages',
  headers: { 'anthropic-version': ANTHROPIC_VERSION },
  // A messages client's beta features (docs/messages.md) reach Anthropic as the client named them.
  requestHeaders: (request) => (request.betas === undefined ? undefined : { 'anthropic-beta': request.betas.join(',') }),
  credentialHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
  body: anthropicBody,
});

export function anthropicBody(request: CanonicalRequest, endpoint: RouteEndpoint, stream: boolean): AnthropicRequestBody {
  // max_tokens is required upstream. Without one from the client, the same bound the credit
  // reservation assumed is sent, so the reply can never cost more than was reserved for it.
  const maxTokens = maxOutputTokens(request, endpoint);
  const body: AnthropicRequestBody = { model: endpoint.upstreamModel, max_tokens: maxTokens, messages: anthropicMessages(request) };
  const system: AnthropicTextBlock[] = [...anthropicSystem(request)];
  if (request.responseFormat?.kind === 'json_object') system.push({ type: 'text', text: JSON_OBJECT_INSTRUCTION });
  if (system.length > 0) body.system = system;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) body.top_k = request.topK;
  if (request.stop !== undefined && request.stop.length > 0) body.stop_sequences = [...request.stop];
  const tools: (AnthropicTool | AnthropicWebSearchTool)[] = (request.tools ?? []).map(anthropicTool);
  // Web search is a server tool beside the function tools: the API runs it within the turn.
  if (request.webSearch === true) tools.push(anthropicWebSearchTool());
  if (tools.length > 0) body.tools = tools;
  const toolChoice = anthropicToolChoice(request.toolChoice, request.parallelToolCalls, body.tools !== undefined);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  const reasoning = anthropicReasoning(request, endpoint, maxTokens);
  if (reasoning.thinking !== undefined) body.thinking = reasoning.thinking;
  const format = outputFormat(request.responseFormat);
  // A messages client's own `output_config.effort` is sent as it wrote it; an effort level of the
  // other dialects is set by the reasoning policy (thinking.ts). No dialect sets both.
  const effort = request.outputEffort ?? reasoning.effort;
  if (effort !== undefined || format !== undefined) {
    body.output_config = { ...(effort !== undefined && { effort }), ...(format !== undefined && { format }) };
  }
  if (request.user !== undefined) body.metadata = { user_id: request.user };
  if (stream) body.stream = true;
  applyCacheOption(body, request.cache);
  return body;
}

function anthropicTool(tool: FunctionTool): AnthropicTool {
  return {
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    // input_schema is required; a tool declared without parameters takes an empty object.
    input_schema: tool.parameters ?? { type: 'object', properties: {} },
    ...(tool.strict !== undefined && { strict: tool.strict }),
    ...(tool.inputExamples !== undefined && { input_examples: [...tool.inputExamples] }),
    ...(tool.cacheControl !== undefined && {
      cache_control: { type: 'ephemeral' as const, ...(tool.cacheControl.ttl !== undefined && { ttl: tool.cacheControl.ttl }) },
    }),
  };
}

/**
 * `parallelToolCalls: false` becomes `disable_parallel_tool_use` on the choice (auto when the
 * client named none); `none` cannot carry it, and with `none` no call is made anyway.
 */
function anthropicToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined, hasTools: boolean): AnthropicToolChoice | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false && hasTools ? { type: 'auto', ...disable } : undefined;
  switch (choice.kind) {
    case 'auto':
      return { type: 'auto', ...disable };
    case 'required':
      return { type: 'any', ...disable };
    case 'tool':
      return { type: 'tool', name: choice.name, ...disable };
    case 'none':
      return { type: 'none' };
    default: {
      const unknown: never = choice;
      throw new Error(`unknown tool choice ${JSON.stringify(unknown)}`);
    }
  }
}

/** A JSON schema goes to the native structured-output field (which takes no name or strict flag). */
function outputFormat(format: ResponseFormat | undefined): { type: 'json_schema'; schema: Record<string, unknown> } | undefined {
  return format?.kind === 'json_schema' ? { type: 'json_schema', schema: format.schema } : undefined;
}
