// A response with the official `openai` SDK's Responses API, pointed at the gateway's /v1, then the
// same response read back by its id (docs/responses.md).
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/responses.mjs
import OpenAI from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });

const response = await client.responses.create({ model: 'gateway/atlas-4-5', instructions: 'Answer briefly.', input: 'Hello!' });
console.log(response.output_text);
console.log(`(${response.usage?.input_tokens} input + ${response.usage?.output_tokens} output tokens)`);

const again = await client.responses.retrieve(response.id);
console.log(`(retrieved ${again.id}: ${again.status})`);
