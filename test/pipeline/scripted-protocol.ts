/**
 * A test protocol whose behaviour is chosen by the upstream model name of the route, so that one
 * config can mix healthy and failing routes: `fail-503`, `fail-429`, `fail-400` throw before
 * anything is produced; `break-after-text` streams some text and then fails; anything else is
 * answered by the simulated provider. It records which routes were called.
 */
import type { StreamBatch } from '../../src/canonical/index.ts';
import { GatewayError } from '../../src/core/errors.ts';
import type { ChatProtocol } from '../../src/protocols/protocol.ts';
import { simulatedProtocol } from '../../src/protocols/simulated/protocol.ts';

export interface ScriptedProtocol extends ChatProtocol {
  readonly calls: string[];
}

function failure(upstreamModel: string): GatewayError | undefined {
  switch (upstreamModel) {
    case 'fail-503':
      return new GatewayError({ code: 'upstream_unavailable', status: 503, message: 'upstream unavailable', retryable: true });
    case 'fail-429':
      return new GatewayError({ code: 'upstream_rate_limited', status: 429, message: 'upstream rate limited', retryable: true, retryAfterSeconds: 1 });
    case 'fail-400':
      return new GatewayError({ code: 'invalid_value', status: 400, message: 'upstream refused the request' });
    default:
      return undefined;
  }
}

export function scriptedProtocol(): ScriptedProtocol {
  const calls: string[] = [];
  return {
    calls,
    unsupportedParameters: [],
    async complete(request, endpoint, context) {
      calls.push(endpoint.upstreamModel);
      const error = failure(endpoint.upstreamModel);
      if (error) throw error;
      return simulatedProtocol.complete(request, endpoint, context);
    },
    async *stream(request, endpoint, context): AsyncGenerator<StreamBatch> {
      calls.push(endpoint.upstreamModel);
      const error = failure(endpoint.upstreamModel);
      if (error) throw error;
      if (endpoint.upstreamModel === 'start-then-503') {
        yield [{ type: 'start' }];
        yield [{ type: 'error', error: failure('fail-503')! }];
        return;
      }
      if (endpoint.upstreamModel === 'break-after-text') {
        yield [{ type: 'start' }, { type: 'text-start', index: 0 }];
        yield [{ type: 'text-delta', index: 0, text: 'partial answer' }];
        yield [{ type: 'error', error: failure('fail-503')! }];
        return;
      }
      yield* simulatedProtocol.stream(request, endpoint, context);
    },
  };
}
