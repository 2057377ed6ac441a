// Helpers of the translation file tests (download, upload): rows by language code, edits through the
// unit edits service, and a zip's entries read back with the unzip tool.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestApp } from './build-app.ts';
import { userActor, type Actor } from '../../src/domain/access/actor.ts';
import type { UnitState } from '../../src/formats/types.ts';

export async function rootActor(ctx: TestApp): Promise<Actor> {
  const root = await ctx.c.db.kysely.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow();
  return userActor(root, { isAdmin: true });
}

export async function componentRow(ctx: TestApp, slug = 'po') {
  return ctx.c.db.kysely.selectFrom('components').selectAll().where('slug', '=', slug).executeTakeFirstOrThrow();
}

export async function translationRow(ctx: TestApp, code: string, componentSlug = 'po') {
  const component = await componentRow(ctx, componentSlug);
  return ctx.c.db.kysely
    .selectFrom('translations')
    .innerJoin('languages', 'languages.id', 'translations.language_id')
    .selectAll('translations')
    .where('translations.component_id', '=', component.id)
    .where('languages.code', '=', code)
    .executeTakeFirstOrThrow();
}

export async function unitsOf(ctx: TestApp, code: string, componentSlug = 'po') {
  const t = await translationRow(ctx, code, componentSlug);
  return ctx.c.db.kysely.selectFrom('units').selectAll().where('translation_id', '=', t.id).orderBy('position').execute();
}

/** Edits through the unit edits service (as root unless `actor`), keyed by the unit's source (or context). */
export async function edit(ctx: TestApp, code: string, edits: Record<string, [string[], UnitState]>, opts: { componentSlug?: string; actor?: Actor } = {}) {
  const t = await translationRow(ctx, code, opts.componentSlug);
  const units = await unitsOf(ctx, code, opts.componentSlug);
  const list = Object.entries(edits).map(([key, [target, state]]) => {
    const unit = units.find((u) => u.source.split('\u001e')[0] === key || u.context === key);
    if (!unit) throw new Error(`no unit ${key}`);
    return { unit, target, state };
  });
  return ctx.c.translation.writes.edits.apply(opts.actor ?? (await rootActor(ctx)), t, list);
}

/** A zip's entries: name → bytes. */
export function unzip(bytes: Buffer): Map<string, Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-zip-'));
  try {
    const file = path.join(dir, 'a.zip');
    fs.writeFileSync(file, bytes);
    const names = execFileSync('unzip', ['-Z1', file]).toString('utf8').split('\n').filter(Boolean);
    return new Map(names.map((n) => [n, execFileSync('unzip', ['-p', file, n])]));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A GNU MO file's entries: key → translation (little endian). */
export function readMo(bytes: Buffer): Map<string, string> {
  if (bytes.readUInt32LE(0) !== 0x950412de) throw new Error('not a MO file');
  const n = bytes.readUInt32LE(8);
  const orig = bytes.readUInt32LE(12);
  const trans = bytes.readUInt32LE(16);
  const str = (table: number, i: number) => {
    const len = bytes.readUInt32LE(table + i * 8);
    const off = bytes.readUInt32LE(table + i * 8 + 4);
    return bytes.subarray(off, off + len).toString('utf8');
  };
  const out = new Map<string, string>();
  for (let i = 0; i < n; i++) out.set(str(orig, i), str(trans, i));
  return out;
}

/** A multipart body: Buffers are files (named `filename`), strings are fields. */
export function multipart(fields: Record<string, string | Buffer>, filename = 'upload.po'): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----hearth${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    if (Buffer.isBuffer(v)) {
      parts.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
        v,
        Buffer.from('\r\n'),
      );
    } else parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
