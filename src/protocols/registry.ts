/**
 * The upstream protocols by provider kind and capability. Adding a provider kind is one entry here
 * and one folder beside this file; a provider that serves several capabilities lists each.
 */
import { implement, provides, servableBy, type ProtocolRegistry } from './capability.ts';
import { CHAT } from './protocol.ts';
import { anthropicProtocol } from './anthropic/index.ts';
import { geminiProtocol } from './gemini/index.ts';
import { openAIChatProtocol } from './openai-chat/index.ts';
import { openAIResponsesProtocol } from './openai-responses/index.ts';
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

export const PROTOCOLS: ProtocolRegistry = {
  simulated: provides(
    implement(CHAT, simulatedProtocol),
    implement(IMAGES, simulatedImagesProtocol),
    implement(VIDEO, simulatedVideoProtocol),
    implement(EMBEDDINGS, simulatedEmbeddingsProtocol),
  ),
  openai: provides(implement(CHAT, openAIChatProtocol), implement(EMBEDDINGS, openAIEmbeddingsProtocol)),
  'openai-responses': provides(implement(CHAT, openAIResponsesProtocol)),
  'openai-images': provides(implement(IMAGES, openAIImagesProtocol)),
  'gpu-pool': provides(implement(IMAGES, gpuPoolProtocol), implement(VIDEO, gpuPoolVideoProtocol)),
  anthropic: provides(implement(CHAT, anthropicProtocol)),
  gemini: provides(
    implement(CHAT, geminiProtocol),
    implement(IMAGES, imagenProtocol),
    implement(VIDEO, veoProtocol),
    implement(EMBEDDINGS, geminiEmbeddingsProtocol),
  ),
};

/** Whether the gateway can call a route of this provider kind for a model of this category today. */
export const callableRoute = servableBy(PROTOCOLS);
