/**
 * Request body parsing. The API takes JSON (and multipart where a route registers it):
 * - Fastify's own JSON parser (with prototype-poisoning protection), except that an empty body is
 *   no body: clients send `Content-Type: application/json` on bodiless DELETEs and GETs, and on a
 *   route that needs a body its schema then reports the missing body as a 400;
 * - no text/plain parser: a non-JSON body is a 415, not a string that fails validation later.
 */
import type { FastifyInstance } from 'fastify';

const BLANK = /^\s*$/;

export function installBodyParsers(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // A test that stops at the first character of a real body, where trim() would copy it.
    if (BLANK.test(text)) {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
