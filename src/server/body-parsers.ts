/**
 * Request body parsing. The API takes JSON (and multipart where a route registers it):
 * - Fastify's own JSON parser (with prototype-poisoning protection), except that an empty body is
 *   no body: clients send `Content-Type: application/json` on bodiless DELETEs and GETs, and on a
 *   route that needs a body its schema then reports the missing body as a 400;
 * - no text/plain parser: a non-JSON body is a 415, not a string that fails validation later;
 * - one nesting bound for every body (core/json-depth.ts): deeper is a 400 before any route sees it.
 */
import type { FastifyInstance } from 'fastify';
import { errors } from '../core/errors.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../core/json-depth.ts';

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
    parseJson(request, text, (error, value) => {
      if (error) return done(error);
      if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return done(errors.jsonTooDeep(MAX_JSON_DEPTH));
      done(null, value);
    });
  });
}
