// A stored request: a chat completion with the openai SDK, then its record by the request id the
// answer carried (GET /v1/outputs/{requestId}), then its JSON output through the signed URL, which
// needs no API key (docs/outputs.md).
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/outputs.mjs
import OpenAI from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });

const { data: completion, response } = await client.chat.completions
  .create({ model: 'gateway/atlas-4-5', messages: [{ role: 'user', content: 'Hello!' }] })
  .withResponse();
const requestId = response.headers.get('x-gateway-request-id');
console.log(completion.choices[0].message.content);

const stored = await fetch(`${baseUrl}/v1/outputs/${requestId}`, { headers: { Authorization: `Bearer ${apiKey}` } });
const record = await stored.json();
if (!stored.ok) {
  console.error(`${stored.status} ${record.error.code}: ${record.error.message}`);
  process.exit(1);
}
console.log(`(stored ${record.id}: ${record.endpoint}, ${record.status}, ${record.cost_usd} USD)`);

// The signed URL works for 10 minutes, from anywhere, without the key.
const [output] = record.outputs;
const file = await fetch(output.url);
const saved = await file.json();
console.log(`(${output.name}, ${output.content_type}: the same completion ${saved.id === completion.id ? 'as answered' : 'NOT as answered'})`);
