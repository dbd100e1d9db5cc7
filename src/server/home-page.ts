/**
 * `GET /`: what a person who opens the gateway's address in a browser reads — what it is, the base
 * URLs the SDKs take, and where the API is described — instead of a JSON 404. One handler in one
 * place, so that it can become a redirect to a dashboard.
 */
import type { FastifyInstance } from 'fastify';

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Gateway</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem}code{background:#f2f2f2;padding:0 .2rem}</style>
</head>
<body>
<h1>Gateway</h1>
<p>This is a multi-provider AI gateway. Its API answers requests made with an API key:</p>
<ul>
<li>OpenAI SDK: this address followed by <code>/v1</code> as its base URL (chat completions, responses, images)</li>
<li>Anthropic SDK: this address, without <code>/v1</code>, as its base URL (messages)</li>
<li><a href="/v1/models">/v1/models</a>: the models it serves (with <code>Authorization: Bearer &lt;API key&gt;</code>)</li>
</ul>
<p>The API is described in <a href="/openapi.json">/openapi.json</a>; the guides are in the <code>docs/</code> folder
of the gateway's source, starting with its <code>README.md</code>. Health: <a href="/healthz">/healthz</a>.</p>
</body>
</html>
`;

export function registerHomePage(app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(PAGE));
}
