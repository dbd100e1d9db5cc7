// Embeddings with the official `openai` SDK: a few documents and a question embedded in one call
// each, then the documents ranked by cosine similarity to the question (a small semantic search).
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/embeddings.mjs
import OpenAI from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });
const model = 'gateway/atlas-embed-1';

const documents = [
  'The lighthouse keeper climbs the tower every evening to light the lamp.',
  'Quarterly revenue grew by nine percent on strong subscription sales.',
  'A paper boat drifts across the pond in the park.',
];
const question = 'Who lights the lamp of the lighthouse?';

// One call for every document: the answer's vectors come in the documents' order.
const indexed = await client.embeddings.create({ model, input: documents });
const asked = await client.embeddings.create({ model, input: question });
const query = asked.data[0].embedding;

// The gateway's vectors have length 1, so the dot product is the cosine similarity.
const dot = (a, b) => a.reduce((sum, value, index) => sum + value * b[index], 0);
const ranked = indexed.data.map(({ index, embedding }) => ({ text: documents[index], score: dot(query, embedding) })).sort((a, b) => b.score - a.score);
for (const { text, score } of ranked) console.log(`${score.toFixed(3)}  ${text}`);
console.log(`(${indexed.usage.prompt_tokens + asked.usage.prompt_tokens} tokens, ${indexed.data[0].embedding.length} dimensions)`);
