import type { ServerResponse } from 'node:http';

/**
 * The client closed its connection before its answer was fully written: nothing more reaches it,
 * and whatever is still under way for it (an upstream call, a stream) is work for nobody.
 */
export function clientLeftBeforeAnswer(response: ServerResponse): boolean {
  return response.destroyed && !response.writableFinished;
}
