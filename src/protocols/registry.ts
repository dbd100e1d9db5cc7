/**
 * The upstream protocols that serve text generation, by provider kind. Adding a provider kind is
 * one line here and one folder beside this file.
 */
import type { ModelConfig, ProviderKind } from '../config/schema.ts';
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

/**
 * Whether the gateway can call a route of this provider kind for a model of this category today:
 * text generation, through one of the protocols above. The catalog's `available` follows it.
 */
export function callableRoute(kind: ProviderKind, category: ModelConfig['category']): boolean {
  return category === 'LLM' && CHAT_PROTOCOLS[kind] !== undefined;
}
