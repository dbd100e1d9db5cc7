/**
 * The simulated reply as a stream: the same content as the complete result, cut into small deltas
 * and paced by the provider's `simulated.chunk_delay_ms`. An aborted call stops between deltas.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatchCollector, type StreamBatch, type Usage } from '../../canonical/index.ts';
import { simulatedLogprobs } from './logprobs.ts';
import type { SimulatedReply } from './request.ts';

/** Pace between deltas when the provider config does not set one. */
export const DEFAULT_CHUNK_DELAY_MS = 2;
/** Deltas are whole words, grouped up to about this many characters. */
const DELTA_CHARACTERS = 16;
const ARGUMENT_DELTAS = 3;

export async function* simulatedStream(
  reply: SimulatedReply,
  usage: Usage,
  start: { responseId: string; model: string },
  delayMs: number,
  signal: AbortSignal,
  /** Set when the request asked for logprobs: each text delta then carries its tokens'. */
  topLogprobs?: number,
): AsyncGenerator<StreamBatch> {
  // Events between two pauses travel together, as the events of one network read would.
  const batch = new BatchCollector();
  const emit = batch.push.bind(batch);
  const handOut = function* (): Generator<StreamBatch> {
    const events = batch.take();
    if (events !== undefined) yield events;
  };
  const pause = async (): Promise<boolean> => {
    if (delayMs > 0) {
      try {
        await sleep(delayMs, undefined, { signal });
      } catch {
        return false;
      }
    }
    return !signal.aborted;
  };
  if (signal.aborted) return;
  emit({ type: 'start', providerResponseId: start.responseId, providerModel: start.model });
  let index = 0;
  if (reply.reasoning) {
    emit({ type: 'reasoning-start', index });
    for (const delta of textDeltas(reply.reasoning)) {
      yield* handOut();
      if (!(await pause())) return;
      emit({ type: 'reasoning-delta', index, text: delta });
    }
    emit({ type: 'reasoning-end', index });
    index++;
  }
  if (reply.text !== undefined) {
    emit({ type: 'text-start', index });
    for (const delta of textDeltas(reply.text)) {
      yield* handOut();
      if (!(await pause())) return;
      emit({ type: 'text-delta', index, text: delta, ...(topLogprobs !== undefined && { logprobs: simulatedLogprobs(delta, topLogprobs) }) });
    }
    emit({ type: 'text-end', index, ...(reply.citations ? { citations: reply.citations } : {}) });
    index++;
  }
  for (const call of reply.toolCalls) {
    yield* handOut();
    if (!(await pause())) return;
    emit({ type: 'tool-call-start', index, id: call.id, name: call.name, ...(call.extraContent ? { extraContent: call.extraContent } : {}) });
    for (const delta of splitEvenly(call.arguments, ARGUMENT_DELTAS)) emit({ type: 'tool-call-delta', index, argumentsDelta: delta });
    emit({ type: 'tool-call-end', index });
    index++;
  }
  if (reply.webSearch) emit({ type: 'web-search', webSearch: reply.webSearch });
  emit({ type: 'usage', usage });
  emit({ type: 'finish', finish: reply.finish });
  yield* handOut();
}

function textDeltas(text: string): string[] {
  const words = text.match(/\s*\S+\s*/g) ?? [text];
  const deltas: string[] = [];
  let current = '';
  for (const word of words) {
    current += word;
    if (current.length >= DELTA_CHARACTERS) {
      deltas.push(current);
      current = '';
    }
  }
  if (current || deltas.length === 0) deltas.push(current);
  return deltas;
}

function splitEvenly(text: string, pieces: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / pieces));
  const result: string[] = [];
  for (let offset = 0; offset < text.length; offset += size) result.push(text.slice(offset, offset + size));
  return result.length ? result : [''];
}
