// A streamed chat completion with the official `openai` SDK: text as it arrives, then the usage
// (sent in the last chunk when `stream_options.include_usage` is set).
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/streaming.mjs
import OpenAI from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });

const stream = await client.chat.completions.create({
  model: 'gateway/atlas-4-5',
  messages: [{ role: 'user', content: 'Count to five.' }],
  stream: true,
  stream_options: { include_usage: true },
});
let usage;
for await (const chunk of stream) {
  process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
  usage = chunk.usage ?? usage;
}
console.log(`\n(${usage?.prompt_tokens} prompt + ${usage?.completion_tokens} completion tokens)`);
