// A background response with the official `openai` SDK: queued at once, polled until it ends, and
// a second one, to a model that takes a few seconds, cancelled while it runs (docs/responses.md,
// "Background responses").
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/background.mjs
import OpenAI from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });

let response = await client.responses.create({ model: 'gateway/atlas-4-5', input: 'Write a haiku about queues.', background: true });
console.log(`(queued ${response.id}: ${response.status})`);
while (response.status === 'queued' || response.status === 'in_progress') {
  await new Promise((resolve) => setTimeout(resolve, 200));
  response = await client.responses.retrieve(response.id);
}
console.log(response.output_text);
console.log(`(${response.status}, charged ${response.usage?.cost} USD)`);

// The demo's deep-research model answers only after a few seconds: time enough to change one's mind.
const second = await client.responses.create({ model: 'gateway/lumen-3-deep-research', input: 'Survey every queueing theory paper.', background: true });
const cancelled = await client.responses.cancel(second.id);
console.log(`(cancelled ${cancelled.id}: ${cancelled.status}, charged ${cancelled.usage?.cost ?? 0} USD)`);
