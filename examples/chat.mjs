// A chat completion with the official `openai` SDK, pointed at the gateway's /v1.
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/chat.mjs
import OpenAI from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });

const completion = await client.chat.completions.create({
  model: 'gateway/atlas-4-5',
  messages: [{ role: 'user', content: 'Hello!' }],
});
console.log(completion.choices[0].message.content);
console.log(`(${completion.usage?.prompt_tokens} prompt + ${completion.usage?.completion_tokens} completion tokens)`);
