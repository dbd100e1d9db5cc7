/**
 * The baseline of the benchmark: a bare pass-through proxy on undici, with no logic at all. It
 * forwards the method, path, headers and body bytes to one upstream and streams the answer back.
 * Whatever a Node gateway does, it cannot be faster than this, so the gateway's figures are read as
 * ratios against it. Run in its own process by bench/run.ts:
 * `node bench/bare-proxy.ts --upstream=http://127.0.0.1:N [--port=0]`; prints `{"port":N}` once
 * listening.
 */
import { createServer, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import { listenForBenchmark } from './listen.ts';

/** Hop-by-hop headers belong to one connection and are never forwarded (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host', 'expect']);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    if (!HOP_BY_HOP.has(name)) out[name] = headers[name];
  }
  return out;
}

/** Streams the upstream answer into the client response as it arrives, with backpressure. */
function relay(response: ServerResponse): Dispatcher.DispatchHandler {
  return {
    onRequestStart(controller) {
      response.once('close', () => {
        if (!response.writableFinished) controller.abort(new Error('client went away'));
      });
    },
    onResponseStart(_controller, statusCode, headers) {
      response.writeHead(statusCode, forwardable(headers));
    },
    onResponseData(controller, chunk) {
      if (!response.write(chunk)) {
        controller.pause();
        response.once('drain', () => controller.resume());
      }
    },
    onResponseEnd() {
      response.end();
    },
    onResponseError(_controller, error) {
      if (response.headersSent) {
        response.destroy(error);
        return;
      }
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: error.message, type: 'api_error', param: null, code: null } }));
    },
  };
}

export function startBareProxy(options: { readonly port: number; readonly upstream: string }): Promise<number> {
  const pool = new Pool(options.upstream, { keepAliveTimeout: 60_000 });
  const server = createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
    // The body is read whole, then sent in one write: undici streaming a request body chunk by
    // chunk costs more per request than the whole proxy otherwise does, for bodies of a few KB.
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
      pool.dispatch(
        {
          method: request.method as Dispatcher.HttpMethod,
          path: request.url ?? '/',
          headers: forwardable(request.headers) as Record<string, string>,
          body: hasBody ? Buffer.concat(chunks) : undefined,
        },
        relay(response),
      );
    });
  });
  return listenForBenchmark(server, options.port);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } } });
  if (values.upstream === undefined) throw new Error('--upstream=http://host:port is required');
  const port = await startBareProxy({ port: Number(values.port), upstream: values.upstream });
  process.stdout.write(`${JSON.stringify({ port })}\n`);
}
