/**
 * Route schemas compiled once per process, each when first used. Fastify compiles every route's
 * validators and response serializers for each app it builds, which is most of the time an app
 * takes to start. The schemas are module constants and every app is built with the same options
 * (app.ts), so an app built after the first (the tests build one per gateway, hundreds in a run)
 * takes the functions compiled for the first rather than compiling them again. And a validator is
 * compiled on its route's first request rather than at start: most of an instance's routes see no
 * request in its first seconds, and a start that does not compile them all is ready about half a
 * second sooner (what a restart, a deploy or an autoscaler waits for). Response serializers are
 * built on their first use likewise. Every route's schemas are compiled by the tests, so a schema
 * that Ajv or fast-json-stringify refuses cannot reach a release.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { Ajv } from 'ajv';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;
type Serializer = ReturnType<ReturnType<SerializerFactory>>;

const validators = new WeakMap<object, ReturnType<Ajv['compile']>>();

/**
 * An Ajv plugin (Fastify's `ajv.plugins`): the app's Ajv answers a schema object that any app's Ajv
 * compiled before with the same function. A plugin rather than a validator compiler of our own, so
 * that Fastify still prepares each route's schemas itself (it lower-cases header names only for
 * its own compiler).
 */
export function sharedValidators(ajv: Ajv): Ajv {
  const compile = ajv.compile.bind(ajv);
  ajv.compile = ((schema: object, meta?: boolean) => {
    let validate = validators.get(schema);
    if (validate === undefined) validators.set(schema, (validate = validatedOnFirstUse(() => compile(schema, meta))));
    return validate;
  }) as Ajv['compile'];
  return ajv;
}

type Validate = ReturnType<Ajv['compile']>;

/** The compilations not yet done, for compileRouteSchemas. */
const uncompiled = new Set<() => unknown>();

/** `compile`, run once: on the first call of what it compiles, or by compileRouteSchemas. */
function onFirstUse<Compiled>(compile: () => Compiled): () => Compiled {
  let compiled: Compiled | undefined;
  const compileOnce = () => {
    if (compiled === undefined) {
      uncompiled.delete(compileOnce);
      compiled = compile();
    }
    return compiled;
  };
  uncompiled.add(compileOnce);
  return compileOnce;
}

/** A validator that compiles its schema when first called; like Ajv's own, it leaves its last errors in `errors`. */
function validatedOnFirstUse(compile: () => Validate): Validate {
  const compiled = onFirstUse(compile);
  const validate = ((data: unknown, context?: Parameters<Validate>[1]) => {
    const run = compiled();
    const valid = run(data, context);
    validate.errors = run.errors;
    return valid;
  }) as Validate;
  validate.errors = null;
  return validate;
}

/** Compiles every route validator and serializer not compiled yet (a test holds every route's schemas to Ajv and fast-json-stringify this way); returns how many. */
export function compileRouteSchemas(): number {
  const pending = [...uncompiled];
  for (const compile of pending) compile();
  return pending.length;
}

const serializerFactory = SerializerSelector();
const serializers = new WeakMap<object, Serializer>();

/** Fastify's serializer factory, answering a response schema object it compiled before with the same function. */
export const sharedSerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = serializerFactory(externalSchemas, options);
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serializer = serializers.get(schema);
    if (serializer === undefined) {
      const compiled = onFirstUse(() => compile(route));
      serializers.set(schema, (serializer = ((data: unknown) => compiled()(data)) as Serializer));
    }
    return serializer;
  };
};
