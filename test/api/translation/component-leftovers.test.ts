// A process killed while creating a component leaves a copy of the repository behind: the staging
// fetch, or the mirror adopted in a transaction that never committed (on PostgreSQL its id is never
// used again). The next start removes them — but not a component's mirror, nor what a creation in
// progress on another node is writing now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { createContainer } from '../../../src/container.ts';
import { buildTestApp } from '../../helpers/build-app.ts';
import { AS_ROOT, poComponent } from '../../helpers/translation.ts';

test('mirrors and staging directories without a component are removed at start; owned and recent ones stay', async (t) => {
  const ctx = await buildTestApp(t);
  await poComponent(t, ctx);
  const { vcs } = ctx.c.translation;
  const k = ctx.c.db.kysely;
  const live = await k.selectFrom('components').selectAll().executeTakeFirstOrThrow();
  const source = { kind: 'local' as const, dir: vcs.mirrorDir(live.id) };

  // killed after the adoption, before the commit: the row is gone, the mirror is not
  const adopted = vcs.stagingDir();
  await vcs.fetch(adopted, source, 'main');
  let orphanId = 0;
  await assert.rejects(
    k.transaction().execute(async (trx) => {
      const { id, created_at, ...values } = live;
      const row = await trx
        .insertInto('components')
        .values({ ...values, name: 'Killed', slug: 'killed', created_at })
        .returning('id')
        .executeTakeFirstOrThrow();
      orphanId = row.id;
      vcs.adopt(adopted, row.id);
      throw new Error('killed');
    }),
    /killed/,
  );
  // killed during the fetch: a staging directory
  const staged = vcs.stagingDir();
  await vcs.fetch(staged, source, 'main');
  // what a creation in progress on another node is fetching into right now
  const inProgress = vcs.stagingDir();
  await vcs.fetch(inProgress, source, 'main');

  const hoursAgo = new Date(Date.now() - 2 * 3600_000);
  for (const dir of [vcs.mirrorDir(orphanId), staged, vcs.mirrorDir(live.id)]) {
    for (const p of [dir, path.join(dir, 'objects'), path.join(dir, 'objects', 'pack')]) fs.utimesSync(p, hoursAgo, hoursAgo);
  }
  const root = path.dirname(vcs.mirrorDir(live.id));
  assert.deepEqual(fs.readdirSync(root).sort(), [`${live.id}.git`, `${orphanId}.git`, path.basename(staged), path.basename(inProgress)].sort());

  // the next start (another process on the same data directory and database)
  const again = await createContainer(ctx.config, { db: { pgSchema: ctx.pgSchema }, log: pino({ level: 'silent' }) });
  await again.close();
  assert.deepEqual(fs.readdirSync(root).sort(), [`${live.id}.git`, path.basename(inProgress)].sort());

  // the component is whole
  const file = await ctx.app.inject({ method: 'GET', url: '/api/translations/hello/po/cs/file/', headers: AS_ROOT });
  assert.equal(file.statusCode, 200);
  const pull = await ctx.app.inject({ method: 'POST', url: '/api/components/hello/po/repository/', headers: AS_ROOT, payload: { operation: 'pull' } });
  assert.equal(pull.statusCode, 200, pull.body);
});
