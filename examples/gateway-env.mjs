// Where the examples find the gateway: GATEWAY_BASE_URL (default http://127.0.0.1:8080, what
// `npm start` serves) and the API key in GATEWAY_API_KEY (the demo key `npm start` prints once).
export const baseUrl = (process.env.GATEWAY_BASE_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
export const apiKey = process.env.GATEWAY_API_KEY ?? '';

if (apiKey === '') {
  console.error('Set GATEWAY_API_KEY to a gateway API key (npm start prints the demo key on its first start).');
  process.exit(1);
}
