// A test app listening on a real port (git over HTTP, hook deliveries).
import net from 'node:net';
import type { TestContext } from 'node:test';
import { buildTestApp, type TestApp } from './build-app.ts';
import type { Config } from '../../src/config.ts';

export interface TestServer extends TestApp {
  /** "http://127.0.0.1:<port>" */
  base: string;
}

/**
 * `selfUrl`: EXTERNAL_URL is the listening address itself (real clients follow the links the
 * server writes, e.g. python-gitlab's pagination); otherwise it stays http://hearth.test.
 */
export async function startTestServer(t: TestContext, overrides: Partial<Config> = {}, opts: { selfUrl?: boolean } = {}): Promise<TestServer> {
  const wanted = opts.selfUrl ? await freePort() : 0;
  const app = await buildTestApp(t, opts.selfUrl ? { externalUrl: `http://127.0.0.1:${wanted}`, ...overrides } : overrides);
  await app.app.listen({ port: wanted, host: '127.0.0.1' });
  const addr = app.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return { ...app, base: `http://127.0.0.1:${port}` };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** "http://user:secret@127.0.0.1:port/group/project.git" */
export function cloneUrl(base: string, fullPath: string, user?: string, secret?: string): string {
  const u = new URL(`${base}/${fullPath}.git`);
  if (user !== undefined) {
    u.username = encodeURIComponent(user);
    u.password = encodeURIComponent(secret ?? '');
  }
  return u.toString();
}
