// Who a request's limited reads (searches with a user's regular expression, db/limited-reads.ts) count
// for: the signed-in user of the API, else the caller's address (req.ip, as the rate limits count
// unauthenticated callers). The handler runs inside that scope, so every read it starts is counted.
import type { FastifyInstance } from 'fastify';
import { asReadsClient } from '../../db/limited-reads.ts';

export function readsClientPlugin(app: FastifyInstance): void {
  // a callback hook: done() runs the rest of the request (the handler) inside the scope
  app.addHook('preHandler', (req, _reply, done) => {
    const user = req.actor?.user;
    asReadsClient(user ? `user:${user.id}` : `ip:${req.ip}`, done);
  });
}
