// The request being served, for log lines written outside Fastify's request logger (services log through the
// container's logger): createLogger's mixin adds its id as `reqId`, the value of the X-Request-Id header.
import { AsyncLocalStorage } from 'node:async_hooks';

export const requestContext = new AsyncLocalStorage<string>();

/** Set on Fastify's request loggers (and inherited by their children): they carry `reqId` already. */
export const BOUND_REQUEST_ID = Symbol('hearth.boundRequestId');
