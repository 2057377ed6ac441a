// The validators and serializers Fastify compiles from route schemas, shared by every app this process builds:
// the same schema (by content, since routes build their schema objects inline) compiles once. A second app in
// one process (tests, the benchmarks) starts in a few milliseconds instead of recompiling ~400 ms of Ajv and
// fast-json-stringify code. The compilers themselves are Fastify's defaults.
import type { FastifyServerOptions } from 'fastify';
import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Compile<F> = F extends (...args: never[]) => infer C ? C : never;
type ValidatorCompile = Compile<NonNullable<Factories['buildValidator']>>;
type SerializerCompile = Compile<NonNullable<Factories['buildSerializer']>>;

const ajvPool = AjvCompiler(); // one Ajv per distinct (external schemas, options), as Fastify pools them per app
const serializers = SerializerSelector();
const validatorsBy = new WeakMap<object, Map<string, ReturnType<ValidatorCompile>>>();
const compiledSerializers = new Map<string, ReturnType<SerializerCompile>>();

export const compilersFactory: Factories = {
  buildValidator(externalSchemas, options) {
    const compile = ajvPool(externalSchemas, options) as ValidatorCompile;
    let cache = validatorsBy.get(compile);
    if (!cache) validatorsBy.set(compile, (cache = new Map()));
    const known = cache;
    return ((route) => {
      const key = JSON.stringify(route.schema);
      let validate = known.get(key);
      if (!validate) known.set(key, (validate = compile(route)));
      return validate;
    }) as ValidatorCompile;
  },
  buildSerializer(externalSchemas, options) {
    const compile = serializers(externalSchemas, options) as SerializerCompile;
    const prefix = `${JSON.stringify(externalSchemas)}\0${JSON.stringify(options)}\0`;
    return ((route) => {
      const key = prefix + JSON.stringify(route.schema);
      let serialize = compiledSerializers.get(key);
      if (!serialize) compiledSerializers.set(key, (serialize = compile(route)));
      return serialize;
    }) as SerializerCompile;
  },
};
