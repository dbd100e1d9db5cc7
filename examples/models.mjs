// The model list with plain fetch, the same request as the README's curl: no SDK needed.
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/models.mjs
import { apiKey, baseUrl } from './gateway-env.mjs';

const response = await fetch(`${baseUrl}/v1/models`, { headers: { Authorization: `Bearer ${apiKey}` } });
const body = await response.json();
if (!response.ok) {
  // Every error is the same envelope: {"error": {"message", "type", "param", "code"}}.
  console.error(`${response.status} ${body.error.code}: ${body.error.message}`);
  process.exit(1);
}
for (const model of body.data) {
  const { unit, input_per_1m, output_per_1m } = model.pricing;
  // Embedding models are priced on their input alone.
  const tokens = output_per_1m === undefined ? `${input_per_1m} in` : `${input_per_1m} in / ${output_per_1m} out`;
  const price = unit === 'per_1m_tokens' ? `${tokens} USD per 1M tokens` : unit;
  console.log(`${model.id.padEnd(32)} ${price}`);
}
