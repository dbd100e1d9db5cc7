/**
 * OpenAI Images errors use the same `{"error":{message,type,param,code}}` envelope as Chat
 * Completions, mapped the same way.
 * @see https://platform.openai.com/docs/guides/error-codes
 */
export { parseChatError as parseImagesError } from '../openai-chat/errors.ts';
