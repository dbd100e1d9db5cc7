// A message with the official `@anthropic-ai/sdk`, pointed at the gateway's root (no /v1), then the
// free local token count of the same conversation.
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/messages.mjs
import Anthropic from '@anthropic-ai/sdk';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new Anthropic({ baseURL: baseUrl, apiKey });

const messages = [{ role: 'user', content: 'Hello!' }];
const message = await client.messages.create({ model: 'gateway/atlas-4-5', max_tokens: 256, messages });
for (const block of message.content) if (block.type === 'text') console.log(block.text);
console.log(`(${message.usage.input_tokens} input + ${message.usage.output_tokens} output tokens)`);

const counted = await client.messages.countTokens({ model: 'gateway/atlas-4-5', messages });
console.log(`(count_tokens: about ${counted.input_tokens} input tokens, free)`);
