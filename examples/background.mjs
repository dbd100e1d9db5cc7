// A background response with the official `openai` SDK: queued at once, polled until it ends, and
// a second one cancelled while it waits or runs (docs/responses.md, "Background responses").
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

const second = await client.responses.create({ model: 'gateway/atlas-4-5', input: 'Never mind.', background: true });
try {
  const cancelled = await client.responses.cancel(second.id);
  console.log(`(cancelled ${cancelled.id}: ${cancelled.status})`);
} catch (error) {
  // It may have ended before the cancel arrived: then it stays as it ended.
  if (!(error instanceof OpenAI.APIError && error.status === 409)) throw error;
  console.log(`(${second.id} had already ended)`);
}
