/**
 * Request pieces the two OpenAI formats (Chat Completions and Responses) write alike: where they go
 * and how they authenticate, a user turn's layout, the tool choice and response format up to the
 * objects each names or nests differently, and media as URLs (a data URL when the canonical part
 * holds the bytes).
 */
import type { ImagePart, ResponseFormat, ToolChoice, ToolResultPart, UserContentPart } from '../canonical/index.ts';
import type { UpstreamAddress } from './upstream-request.ts';

export const OPENAI_ADDRESS: UpstreamAddress = {
  defaultBaseUrl: 'https://api.openai.com/v1',
  credentialHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
};

/** How one format writes each piece of a user turn. */
export interface UserTurnShapes<Item, Part> {
  toolResult(part: ToolResultPart): Item;
  text(text: string): Part;
  image(part: ImagePart): Part;
  file(file: { file_data: string; filename?: string }): Part;
  message(parts: Part[]): Item;
}

/**
 * A canonical user turn may hold tool results (the messages dialect puts them there); both formats
 * want them as items of their own that directly follow the assistant's calls, so they go first, and
 * the rest of the turn follows as one user message. Plain-text documents are text; any other
 * document travels as a file (PDF input).
 */
export function userTurnItems<Item, Part>(content: readonly UserContentPart[], shapes: UserTurnShapes<Item, Part>): Item[] {
  const items: Item[] = [];
  const parts: Part[] = [];
  for (const part of content) {
    switch (part.type) {
      case 'tool_result':
        items.push(shapes.toolResult(part));
        break;
      case 'text':
        parts.push(shapes.text(part.text));
        break;
      case 'image':
        parts.push(shapes.image(part));
        break;
      case 'document':
        parts.push(
          part.mediaType === 'text/plain'
            ? shapes.text(part.data)
            : shapes.file({ file_data: dataUrl(part.mediaType, part.data), ...(part.title !== undefined && { filename: part.title }) }),
        );
        break;
      default: {
        const unknown: never = part;
        throw new Error(`unknown user part ${JSON.stringify(unknown)}`);
      }
    }
  }
  if (parts.length > 0) items.push(shapes.message(parts));
  return items;
}

/** `named` shapes the choice of one function, the only form the two formats write differently. */
export function openAIToolChoice<Named>(choice: ToolChoice, named: (name: string) => Named): 'auto' | 'none' | 'required' | Named {
  return choice.kind === 'tool' ? named(choice.name) : choice.kind;
}

export interface JsonSchemaFields {
  readonly name: string;
  readonly schema: Record<string, unknown>;
  readonly strict?: boolean;
  readonly description?: string;
}

/** `jsonSchema` places the schema fields: Chat nests them under `json_schema`, Responses keeps them flat. */
export function openAIResponseFormat<Schema>(
  format: ResponseFormat,
  jsonSchema: (fields: JsonSchemaFields) => Schema,
): { type: 'text' } | { type: 'json_object' } | Schema {
  if (format.kind !== 'json_schema') return { type: format.kind };
  return jsonSchema({
    name: format.name,
    schema: format.schema,
    ...(format.strict !== undefined && { strict: format.strict }),
    ...(format.description !== undefined && { description: format.description }),
  });
}

function dataUrl(mediaType: string, data: string): string {
  return `data:${mediaType};base64,${data}`;
}

export function imageUrl(part: ImagePart): string {
  return part.source.kind === 'url' ? part.source.url : dataUrl(part.source.mediaType, part.source.data);
}
