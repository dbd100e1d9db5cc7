/**
 * Canonical conversation → Gemini `systemInstruction` and `contents` (docs/protocols.md).
 *
 * - Roles are `user` and `model`; tool results are `functionResponse` parts of a user turn, and
 *   consecutive turns of one side are merged, results first (the API expects the responses to a
 *   turn's calls together, in the turn right after it).
 * - A `functionResponse` needs the function's name: the tool result's own, else the name of the
 *   earlier call with the same id. Its `response` must be an object: the text is wrapped as
 *   `{result: text}`, or `{error: text}` for a failed call (the API's documented key for errors).
 * - Reasoning goes back only as thought parts that carry a Gemini signature; other families'
 *   reasoning means nothing to Gemini and is dropped.
 * - Image URLs are sent as `fileData` with the media type their extension tells, when it does.
 */
import type { AssistantContentPart, CanonicalRequest, DocumentPart, ImagePart, Message, ToolResultPart, UserContentPart } from '../../canonical/index.ts';
import { rejectParameter } from '../../policy/violation.ts';
import { toolArgumentsObject } from '../tool-arguments.ts';
import { thoughtSignatureOf, upstreamCallId } from './signatures.ts';
import type { GeminiContent, GeminiPart } from './wire.ts';

export function geminiSystemInstruction(request: CanonicalRequest): { parts: { text: string }[] } | undefined {
  return request.system.length > 0 ? { parts: request.system.map((block) => ({ text: block.text })) } : undefined;
}

export function geminiContents(request: CanonicalRequest): GeminiContent[] {
  const callNames = toolCallNames(request.messages);
  const contents: GeminiContent[] = [];
  for (const message of request.messages) {
    const turn = contentFor(message, callNames);
    if (turn.parts.length === 0) continue;
    const last = contents.at(-1);
    if (last?.role === turn.role) last.parts.push(...turn.parts);
    else contents.push(turn);
  }
  for (const content of contents) {
    if (content.role === 'user') content.parts = [...content.parts.filter(isFunctionResponse), ...content.parts.filter((part) => !isFunctionResponse(part))];
  }
  return contents;
}

function contentFor(message: Message, callNames: ReadonlyMap<string, string>): GeminiContent {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: message.content.map((part) => userPart(part, callNames)) };
    case 'tool':
      return { role: 'user', parts: message.content.map((part) => functionResponsePart(part, callNames)) };
    case 'assistant':
      return { role: 'model', parts: message.content.flatMap((part) => modelParts(part)) };
    default: {
      const unknown: never = message;
      throw new Error(`unknown role ${JSON.stringify(unknown)}`);
    }
  }
}

function userPart(part: UserContentPart, callNames: ReadonlyMap<string, string>): GeminiPart {
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'image':
      return imagePart(part);
    case 'document':
      return documentPart(part);
    case 'tool_result':
      return functionResponsePart(part, callNames);
    default: {
      const unknown: never = part;
      throw new Error(`unknown user part ${JSON.stringify(unknown)}`);
    }
  }
}

function modelParts(part: AssistantContentPart): GeminiPart[] {
  switch (part.type) {
    case 'text':
      return part.text === '' ? [] : [{ text: part.text }];
    case 'tool_call': {
      const id = upstreamCallId(part.id, part.name);
      const signature = thoughtSignatureOf(part);
      return [
        {
          functionCall: { name: part.name, args: toolArgumentsObject(part), ...(id !== undefined && { id }) },
          ...(signature !== undefined && { thoughtSignature: signature }),
        },
      ];
    }
    case 'reasoning':
      return part.signature?.family === 'gemini' ? [{ text: part.text, thought: true, thoughtSignature: part.signature.value }] : [];
    default: {
      const unknown: never = part;
      throw new Error(`unknown assistant part ${JSON.stringify(unknown)}`);
    }
  }
}

function functionResponsePart(part: ToolResultPart, callNames: ReadonlyMap<string, string>): GeminiPart {
  const name = part.name ?? callNames.get(part.toolCallId);
  if (name === undefined) {
    throw rejectParameter(
      'messages',
      `The tool result for call '${part.toolCallId}' names no function and answers no earlier tool call; this model needs the function name.`,
      'invalid_value',
    );
  }
  const text = part.content
    .map((item) => {
      if (item.type === 'image') throw rejectParameter('messages', 'Images inside tool results are not supported by this model.', 'invalid_value');
      return item.text;
    })
    .join('');
  const id = upstreamCallId(part.toolCallId, name);
  return { functionResponse: { name, response: part.isError === true ? { error: text } : { result: text }, ...(id !== undefined && { id }) } };
}

function imagePart(part: ImagePart): GeminiPart {
  if (part.source.kind === 'base64') return { inlineData: { mimeType: part.source.mediaType, data: part.source.data } };
  const mimeType = imageTypeOf(part.source.url);
  return { fileData: { fileUri: part.source.url, ...(mimeType !== undefined && { mimeType }) } };
}

/** Plain-text documents are text (canonical `data` is the text itself); others go inline (PDF). */
function documentPart(part: DocumentPart): GeminiPart {
  return part.mediaType === 'text/plain' ? { text: part.data } : { inlineData: { mimeType: part.mediaType, data: part.data } };
}

const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
};

function imageTypeOf(url: string): string | undefined {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase();
  return extension === undefined ? undefined : IMAGE_TYPES[extension];
}

function isFunctionResponse(part: GeminiPart): boolean {
  return 'functionResponse' in part;
}

/** Tool-call id → function name, over the whole conversation (results may name only the id). */
function toolCallNames(messages: readonly Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) if (part.type === 'tool_call') names.set(part.id, part.name);
  }
  return names;
}
