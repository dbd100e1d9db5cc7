/**
 * Rebuilds a complete result from a stream's events: for the stored output of a streamed request,
 * and for billing a stream that ended without the provider's final usage.
 */
import type {
  AssistantContentPart,
  CanonicalResult,
  Citation,
  ContentLogprob,
  Finish,
  OpaqueProviderData,
  StreamEvent,
  Usage,
  WebSearchInfo,
} from '../canonical/index.ts';
import { ZERO_USAGE } from '../canonical/index.ts';
import type { StreamedOutput } from '../billing/partial-usage.ts';

type PartBuilder =
  | { kind: 'text'; chunks: string[] }
  | { kind: 'reasoning'; chunks: string[]; redacted: boolean; signature?: OpaqueProviderData }
  | {
      kind: 'tool_call';
      id: string;
      name: string;
      chunks: string[];
      signature?: OpaqueProviderData;
      extraContent?: Readonly<Record<string, unknown>>;
    };

export class StreamAccumulator {
  readonly #parts = new Map<number, PartBuilder>();
  #citations: Citation[] = [];
  #logprobs: ContentLogprob[] = [];
  #providerResponseId: string | undefined;
  #providerModel: string | undefined;
  /** The provider's latest (cumulative) usage, when it reported any. */
  usage: Usage | undefined;
  /** The latest usage object as the provider sent it. */
  reportedUsage: Readonly<Record<string, unknown>> | undefined;
  webSearch: WebSearchInfo | undefined;

  observe(event: StreamEvent): void {
    switch (event.type) {
      case 'start':
        this.#providerResponseId = event.providerResponseId;
        this.#providerModel = event.providerModel;
        return;
      case 'text-start':
        this.#parts.set(event.index, { kind: 'text', chunks: [] });
        return;
      case 'text-delta':
        this.#chunksOf(event.index, 'text')?.push(event.text);
        if (event.logprobs) this.#logprobs.push(...event.logprobs);
        return;
      case 'text-end':
        if (event.citations) this.#citations.push(...event.citations);
        return;
      case 'reasoning-start':
        this.#parts.set(event.index, { kind: 'reasoning', chunks: [], redacted: event.redacted === true });
        return;
      case 'reasoning-delta':
        this.#chunksOf(event.index, 'reasoning')?.push(event.text);
        return;
      case 'reasoning-end': {
        const part = this.#parts.get(event.index);
        if (part?.kind === 'reasoning' && event.signature) part.signature = event.signature;
        return;
      }
      case 'tool-call-start':
        this.#parts.set(event.index, {
          kind: 'tool_call',
          id: event.id,
          name: event.name,
          chunks: [],
          signature: event.signature,
          extraContent: event.extraContent,
        });
        return;
      case 'tool-call-delta':
        this.#chunksOf(event.index, 'tool_call')?.push(event.argumentsDelta);
        return;
      case 'tool-call-end':
        return;
      case 'usage':
        this.usage = event.usage;
        if (event.reported !== undefined) this.reportedUsage = event.reported;
        return;
      case 'web-search':
        this.webSearch = event.webSearch;
        return;
      case 'finish':
      case 'error':
        return;
      default: {
        const unreachable: never = event;
        return unreachable;
      }
    }
  }

  #chunksOf(index: number, kind: PartBuilder['kind']): string[] | undefined {
    const part = this.#parts.get(index);
    return part?.kind === kind ? part.chunks : undefined;
  }

  /** What was forwarded so far, as text the tokenizer can count. */
  streamedOutput(): StreamedOutput {
    const output: string[] = [];
    const reasoning: string[] = [];
    for (const part of this.#parts.values()) {
      if (part.kind === 'reasoning') reasoning.push(...part.chunks);
      else if (part.kind === 'tool_call') output.push(part.name, ...part.chunks);
      else output.push(...part.chunks);
    }
    return { outputText: output.join(''), reasoningText: reasoning.join('') };
  }

  result(finish: Finish, usage: Usage = this.usage ?? ZERO_USAGE): CanonicalResult {
    const content: AssistantContentPart[] = [];
    for (const index of [...this.#parts.keys()].sort((a, b) => a - b)) {
      const part = this.#parts.get(index)!;
      switch (part.kind) {
        case 'text':
          content.push({ type: 'text', text: part.chunks.join('') });
          break;
        case 'reasoning':
          content.push({
            type: 'reasoning',
            text: part.chunks.join(''),
            ...(part.signature ? { signature: part.signature } : {}),
            ...(part.redacted ? { redacted: true } : {}),
          });
          break;
        case 'tool_call':
          content.push({
            type: 'tool_call',
            id: part.id,
            name: part.name,
            arguments: part.chunks.join(''),
            ...(part.signature ? { signature: part.signature } : {}),
            ...(part.extraContent ? { extraContent: part.extraContent } : {}),
          });
          break;
        default: {
          const unreachable: never = part;
          return unreachable;
        }
      }
    }
    return {
      providerResponseId: this.#providerResponseId,
      providerModel: this.#providerModel,
      content,
      finish,
      usage,
      webSearch: this.webSearch,
      ...(this.#citations.length ? { citations: this.#citations } : {}),
      ...(this.#logprobs.length ? { logprobs: this.#logprobs } : {}),
    };
  }
}
