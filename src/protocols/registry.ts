/**
 * The upstream protocols by provider kind and capability. Adding a provider kind is one entry here
 * and one folder beside this file; a provider that serves several capabilities lists each.
 */
import { implement, provides, servableBy, type ProtocolRegistry } from './capability.ts';
import { httpChatProtocol } from './http-protocol.ts';
import { CHAT, type HttpChatTranslator, type StreamDecoding } from './protocol.ts';
import { anthropicTranslator } from './anthropic/index.ts';
import { geminiTranslator } from './gemini/index.ts';
import { openAIChatTranslator } from './openai-chat/index.ts';
import { openAIResponsesTranslator } from './openai-responses/index.ts';
import { simulatedProtocol } from './simulated/protocol.ts';
import { simulatedImagesProtocol } from './simulated/images.ts';
import { simulatedVideoProtocol } from './simulated/video.ts';
import { VIDEO } from './video-protocol.ts';
import { IMAGES } from './image-protocol.ts';
import { openAIImagesProtocol } from './openai-images/index.ts';
import { imagenProtocol } from './imagen/index.ts';
import { gpuPoolProtocol } from './gpu-pool/index.ts';
import { veoProtocol } from './veo/index.ts';
import { gpuPoolVideoProtocol } from './gpu-pool/video.ts';
import { EMBEDDINGS } from './embedding-protocol.ts';
import { simulatedEmbeddingsProtocol } from './simulated/embeddings.ts';
import { openAIEmbeddingsProtocol } from './openai-embeddings/index.ts';
import { geminiEmbeddingsProtocol } from './gemini-embeddings/index.ts';

/** Every protocol, the text streams of the HTTP chat protocols read as `decoding` says. */
function protocolRegistry(decoding: StreamDecoding): ProtocolRegistry {
  const chat = (translator: HttpChatTranslator) => implement(CHAT, httpChatProtocol(translator, decoding));
  return {
    simulated: provides(
      implement(CHAT, simulatedProtocol),
      implement(IMAGES, simulatedImagesProtocol),
      implement(VIDEO, simulatedVideoProtocol),
      implement(EMBEDDINGS, simulatedEmbeddingsProtocol),
    ),
    openai: provides(chat(openAIChatTranslator), implement(EMBEDDINGS, openAIEmbeddingsProtocol)),
    'openai-responses': provides(chat(openAIResponsesTranslator)),
    'openai-images': provides(implement(IMAGES, openAIImagesProtocol)),
    'gpu-pool': provides(implement(IMAGES, gpuPoolProtocol), implement(VIDEO, gpuPoolVideoProtocol)),
    anthropic: provides(chat(anthropicTranslator)),
    gemini: provides(chat(geminiTranslator), implement(IMAGES, imagenProtocol), implement(VIDEO, veoProtocol), implement(EMBEDDINGS, geminiEmbeddingsProtocol)),
  };
}

export const PROTOCOLS: ProtocolRegistry = protocolRegistry('templates');

let fullyDecoding: ProtocolRegistry | undefined;

/** The registry of a server whose streams are decoded as `decoding` says (GATEWAY_STREAM_DECODING). */
export function protocolsDecoding(decoding: StreamDecoding): ProtocolRegistry {
  if (decoding === 'templates') return PROTOCOLS;
  fullyDecoding ??= protocolRegistry('full');
  return fullyDecoding;
}

/** Whether the gateway can call a route of this provider kind for a model of this category today. */
export const callableRoute = servableBy(PROTOCOLS);
