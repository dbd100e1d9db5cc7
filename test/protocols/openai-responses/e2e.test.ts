/**
 * The official `openai` client against the gateway's chat completions endpoint, whose upstream is
 * an OpenAI Responses simulator: the shared scenarios, chat rule 3, and the Responses mapping.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chatEndToEndSuite, SINGLE_MODEL } from '../../simulators/chat-e2e.ts';
import { startOpenAIResponsesSimulator } from '../../simulators/openai-responses.ts';
import { assertRefusedBeforeUpstream } from '../helpers.ts';

const context = chatEndToEndSuite({ kind: 'openai-responses', startSimulator: (apiKey) => startOpenAIResponsesSimulator({ apiKey }) });

describe('openai responses upstream specifics', () => {
  // Spec chat rule 3: explicit values are rejected before any upstream call, `logprobs: false` included.
  // top_logprobs needs logprobs: true (chat's own rule), so that row may be reported under either name.
  const rejected: [string, Record<string, unknown>, readonly string[]][] = [
    ['stop', { stop: ['END'] }, ['stop']],
    ['seed', { seed: 1 }, ['seed']],
    ['presence_penalty', { presence_penalty: 0 }, ['presence_penalty']],
    ['frequency_penalty', { frequency_penalty: 0.5 }, ['frequency_penalty']],
    ['logprobs', { logprobs: false }, ['logprobs']],
    ['top_logprobs', { logprobs: true, top_logprobs: 2 }, ['logprobs', 'top_logprobs']],
  ];
  for (const [name, fields, params] of rejected) {
    test(`rule 3: explicit ${name} → 400 unsupported_parameter naming it`, () => assertRefusedBeforeUpstream(context(), fields, params));
  }

  test('system → instructions, max tokens → max_output_tokens, effort → reasoning, length stop', async () => {
    const { client, primary } = context();
    const completion = await client.chat.completions.create({
      model: SINGLE_MODEL,
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'one two three four five' }],
      max_completion_tokens: 8,
      reasoning_effort: 'low',
    });
    const body = primary.requests.at(-1)!.body;
    assert.deepEqual(
      { instructions: body.instructions, max: body.max_output_tokens, reasoning: body.reasoning },
      { instructions: 'Be brief.', max: 8, reasoning: { effort: 'low' } },
    );
    assert.equal(completion.choices[0].finish_reason, 'length');
    assert.ok((completion.usage?.completion_tokens_details?.reasoning_tokens ?? 0) > 0);
  });
});
