/**
 * The `openai` upstream protocol: OpenAI Chat Completions, and every server that speaks it (vLLM,
 * Ollama, llama.cpp, Together, Groq, Google's compatible endpoint).
 */
import type { HttpChatTranslator } from '../protocol.ts';
import { parseChatError } from './errors.ts';
import { buildChatRequest } from './request.ts';
import { parseChatResponse } from './response.ts';
import { createChatStreamDecoder } from './stream.ts';

export const openAIChatTranslator: HttpChatTranslator = {
  // The documented format has no top_k (the messages dialect's sampling knob).
  // Chat returns no reasoning text, so a reasoning summary cannot be honoured.
  unsupportedParameters: ['topK', 'reasoningSummary', 'outputEffort', 'toolInputExamples'],
  buildRequest: buildChatRequest,
  parseResponse: parseChatResponse,
  createStreamDecoder: createChatStreamDecoder,
  parseError: parseChatError,
};
