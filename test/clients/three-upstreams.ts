/**
 * One gateway in front of one upstream per text protocol the clients' endpoints meet: a model on an
 * Anthropic upstream, one on an OpenAI Responses upstream and one on an OpenAI chat upstream, each a
 * protocol simulator (test/simulators/), priced as chatModelsConfig's first route.
 */
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../simulators/anthropic.ts';
import { chatModelsConfig } from '../simulators/gateway-config.ts';
import { startOpenAIChatSimulator, type OpenAIChatSimulatorOptions, type OpenAIChatSimulator } from '../simulators/openai-chat.ts';
import { startOpenAIResponsesSimulator, type OpenAIResponsesSimulator } from '../simulators/openai-responses.ts';

export const ON_ANTHROPIC = 'gateway/on-anthropic';
export const ON_RESPONSES = 'gateway/on-responses';
export const ON_CHAT = 'gateway/on-chat';

export interface ThreeUpstreams {
  readonly gateway: TestGateway;
  readonly anthropicUpstream: AnthropicSimulator;
  readonly responsesUpstream: OpenAIResponsesSimulator;
  readonly chatUpstream: OpenAIChatSimulator;
  close(): Promise<void>;
}

export async function startThreeUpstreams(chat: OpenAIChatSimulatorOptions = {}): Promise<ThreeUpstreams> {
  const anthropicUpstream = await startAnthropicSimulator({ apiKey: 'sk-a' });
  const responsesUpstream = await startOpenAIResponsesSimulator({ apiKey: 'sk-r' });
  const chatUpstream = await startOpenAIChatSimulator({ apiKey: 'sk-c', ...chat });
  const gateway = await startGateway({
    config: chatModelsConfig({
      [ON_ANTHROPIC]: [{ id: 'anthropic', kind: 'anthropic', baseUrl: anthropicUpstream.baseUrl, apiKeyEnv: 'A_KEY' }],
      [ON_RESPONSES]: [{ id: 'responses', kind: 'openai-responses', baseUrl: responsesUpstream.baseUrl, apiKeyEnv: 'R_KEY' }],
      [ON_CHAT]: [{ id: 'chat', kind: 'openai', baseUrl: chatUpstream.baseUrl, apiKeyEnv: 'C_KEY' }],
    }),
    env: { A_KEY: 'sk-a', R_KEY: 'sk-r', C_KEY: 'sk-c' },
    creditUsd: '10',
  });
  return {
    gateway,
    anthropicUpstream,
    responsesUpstream,
    chatUpstream,
    close: async () => {
      await gateway.close();
      await Promise.all([anthropicUpstream.close(), responsesUpstream.close(), chatUpstream.close()]);
    },
  };
}
