/**
 * The upstream protocols that serve text generation, by provider kind. Adding a provider kind is
 * one line here and one folder beside this file.
 */
import type { ProviderKind } from '../config/schema.ts';
import type { ChatProtocol } from './protocol.ts';
import { anthropicProtocol } from './anthropic/index.ts';
import { geminiProtocol } from './gemini/index.ts';
import { openAIChatProtocol } from './openai-chat/index.ts';
import { openAIResponsesProtocol } from './openai-responses/index.ts';
import { simulatedProtocol } from './simulated/protocol.ts';

export type ChatProtocolRegistry = Readonly<Partial<Record<ProviderKind, ChatProtocol>>>;

export const CHAT_PROTOCOLS: ChatProtocolRegistry = {
  simulated: simulatedProtocol,
  openai: openAIChatProtocol,
  'openai-responses': openAIResponsesProtocol,
  anthropic: anthropicProtocol,
  gemini: geminiProtocol,
};
