// buildTestApp(t): the real container and app on a database in its first-start state (a temporary SQLite file, or a
// PostgreSQL schema of its own when DATABASE_URL_TEST is set; see test-db.ts for how they are prepared quickly),
// closed after the test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import pino from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.ts';
import { createContainer, type Container, type ContainerOptions } from '../../src/container.ts';
import { buildApp } from '../../src/app.ts';
import { makeSeed, type Seed } from './seed.ts';
import { acquirePgSchema, prepareSqlite, releasePgSchema, rememberPg, rememberSqlite } from './test-db.ts';

export const ROOT_TOKEN = 'glpat-test-root-token-0000000000';
export const EXTERNAL_URL = 'http://hearth.test';

export interface TestApp {
  app: FastifyInstance;
  c: Container;
  seed: Seed;
  config: Config;
  /** headers authenticating as root */
  root: Record<string, string>;
  dataDir: string;
  /** the PostgreSQL schema of this test (with DATABASE_URL_TEST), for a second container on the same database */
  pgSchema?: string;
}

export async function buildTestApp(
  t: TestContext | { after(fn: () => unknown): void },
  overrides: Partial<Config> = {},
  opts: Pick<ContainerOptions, 'resolve'> = {},
): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-test-'));
  const testUrl = process.env.DATABASE_URL_TEST || null;
  const config = loadConfig(
    {
      DATA_DIR: dataDir,
      EXTERNAL_URL,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'silent',
      HEARTH_ROOT_PASSWORD: 'root-password-1',
      HEARTH_ROOT_TOKEN: ROOT_TOKEN,
    },
    { databaseUrl: testUrl, ...overrides },
  );
  const pgSchema = testUrl ? await acquirePgSchema(testUrl, config) : undefined;
  if (!testUrl) prepareSqlite(config);
  const c = await createContainer(config, { db: { pgSchema }, log: pino({ level: config.logLevel }), ...opts });
  if (pgSchema) await rememberPg(testUrl!, config, pgSchema);
  else rememberSqlite(config, c);
  const app = await buildApp(c);
  t.after(async () => {
    await app.close();
    await c.close();
    if (pgSchema) await releasePgSchema(testUrl!, config, pgSchema);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { app, c, seed: makeSeed(c), config, root: { 'private-token': ROOT_TOKEN }, dataDir, pgSchema };
}
