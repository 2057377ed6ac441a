// A test app listening on a real port (git over HTTP, hook deliveries).
import type { TestContext } from 'node:test';
import { buildTestApp, type TestApp } from './build-app.ts';
import type { Config } from '../../src/config.ts';

export interface TestServer extends TestApp {
  /** "http://127.0.0.1:<port>" */
  base: string;
}

export async function startTestServer(t: TestContext, overrides: Partial<Config> = {}): Promise<TestServer> {
  const app = await buildTestApp(t, overrides);
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return { ...app, base: `http://127.0.0.1:${port}` };
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
