// The request bodies of token creation and rotation (personal access and impersonation tokens).
import type { FastifyRequest } from 'fastify';

/**
 * Request bodies as Grape sees them: no body means no parameters (not an invalid body), a blank or null
 * optional Date is not given, and scopes may be comma-separated (`scopes=api,read_user`, CommaSeparatedToArray).
 */
export async function normaliseTokenBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
  const b = req.body as Record<string, unknown>;
  if (typeof b !== 'object') return;
  if (b.expires_at === '' || b.expires_at === null) delete b.expires_at;
  if (b.scopes === null) delete b.scopes;
  if (b.scopes !== undefined) {
    const list = Array.isArray(b.scopes) ? b.scopes : [b.scopes];
    b.scopes = list.flatMap((v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [v],
    );
  }
}
