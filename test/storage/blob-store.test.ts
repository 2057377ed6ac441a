// One contract for every blob store: the local directory and an S3 bucket on a real S3-compatible
// server (s3rver) started here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { type BlobStore, BlobTooLargeError } from '../../src/storage/blob-store.ts';
import { createBlobStore } from '../../src/storage/create-blob-store.ts';
import { startS3, type S3Server } from '../helpers/blob-store-s3rver.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A stream of `n` bytes in 64 KiB chunks, never whole in memory. */
function chunks(n: number, byte = 0x61): Readable {
  let left = n;
  const chunk = Buffer.alloc(65536, byte);
  return new Readable({
    read() {
      if (left <= 0) return this.push(null);
      const k = Math.min(left, chunk.length);
      left -= k;
      this.push(k === chunk.length ? chunk : chunk.subarray(0, k));
    },
  });
}

function contract(name: string, open: () => Promise<{ store: BlobStore; files?: () => Promise<string[]>; done: () => Promise<void> }>): void {
  describe(name, () => {
    let store: BlobStore;
    let files: (() => Promise<string[]>) | undefined;
    let done: () => Promise<void>;
    before(async () => {
      ({ store, files, done } = await open());
    });
    after(async () => {
      await store.close();
      await done();
    });

    test('put a buffer and a stream: size and SHA-256; get whole and by range; stat; replace', async () => {
      const data = randomBytes(300_000);
      assert.deepEqual(await store.put('artifacts/1/2/archive-a.zip', data), { size: data.length, sha256: sha(data) });
      assert.deepEqual(await store.stat('artifacts/1/2/archive-a.zip'), { size: data.length });
      assert.ok((await buffer((await store.get('artifacts/1/2/archive-a.zip'))!)).equals(data));
      assert.ok((await buffer((await store.get('artifacts/1/2/archive-a.zip', { start: 1000, end: 1999 }))!)).equals(data.subarray(1000, 2000)));
      assert.ok((await buffer((await store.get('artifacts/1/2/archive-a.zip', { start: 299_990, end: 299_999 }))!)).equals(data.subarray(299_990)));

      const big = await store.put('artifacts/1/2/archive-a.zip', chunks(3 * 1024 * 1024 + 7));
      assert.equal(big.size, 3 * 1024 * 1024 + 7);
      assert.equal(big.sha256, sha(Buffer.alloc(3 * 1024 * 1024 + 7, 0x61)));
      assert.deepEqual(await store.stat('artifacts/1/2/archive-a.zip'), { size: big.size });
    });

    test('putFile: a complete local file stored under a key (moved or copied)', async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-putfile-'));
      try {
        const data = randomBytes(200_000);
        const file = path.join(dir, 'f');
        await fs.writeFile(file, data);
        await store.putFile('pf/1.zip', file);
        assert.deepEqual(await store.stat('pf/1.zip'), { size: data.length });
        assert.ok((await buffer((await store.get('pf/1.zip'))!)).equals(data));
        await assert.rejects(
          store.putFile('../x', file).catch((e) => Promise.reject(e)),
          /invalid blob key|ENOENT/,
        );
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    });

    test('an empty blob', async () => {
      assert.deepEqual(await store.put('e/empty', Buffer.alloc(0)), { size: 0, sha256: sha(Buffer.alloc(0)) });
      assert.deepEqual(await store.stat('e/empty'), { size: 0 });
      assert.equal((await buffer((await store.get('e/empty'))!)).length, 0);
    });

    test('missing blobs: get and stat null, delete is fine', async () => {
      assert.equal(await store.get('nope/x'), null);
      assert.equal(await store.get('nope/x', { start: 0, end: 10 }), null);
      assert.equal(await store.stat('nope/x'), null);
      await store.delete('nope/x');
    });

    test('delete removes the blob', async () => {
      await store.put('d/1', Buffer.from('x'));
      await store.delete('d/1');
      assert.equal(await store.stat('d/1'), null);
      assert.equal(await store.get('d/1'), null);
    });

    test('over maxBytes: BlobTooLargeError, nothing written, an existing blob kept, no temporary file left', async () => {
      await store.put('big/1', Buffer.from('old'));
      await assert.rejects(store.put('big/1', chunks(200_000), { maxBytes: 100_000 }), BlobTooLargeError);
      await assert.rejects(store.put('big/2', Buffer.alloc(11), { maxBytes: 10 }), BlobTooLargeError);
      assert.equal((await buffer((await store.get('big/1'))!)).toString(), 'old');
      assert.equal(await store.stat('big/2'), null);
      assert.deepEqual(await store.put('big/3', Buffer.alloc(10), { maxBytes: 10 }), { size: 10, sha256: sha(Buffer.alloc(10)) });
      if (files)
        assert.deepEqual(
          (await files()).filter((f) => f.startsWith('.tmp/') && f !== '.tmp/'),
          [],
        );
    });

    test('a failing source stream: rejected, nothing written', async () => {
      const failing = new Readable({
        read() {
          this.destroy(new Error('connection reset'));
        },
      });
      await assert.rejects(store.put('fail/1', failing), /connection reset/);
      assert.equal(await store.stat('fail/1'), null);
    });

    test('keys: relative segments only; `..`, `.`, absolute, empty and odd characters refused', async () => {
      for (const key of ['../x', 'a/../b', '/abs', '', 'a//b', './a', 'a/.', 'a b', 'a\\b', 'a\0b']) {
        await assert.rejects(store.put(key, Buffer.from('x')), /invalid blob key/, key);
        await assert.rejects(store.get(key), /invalid blob key/, key);
        await assert.rejects(store.delete(key), /invalid blob key/, key);
      }
    });
  });
}

async function walk(dir: string, base = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true })) {
    const rel = base ? `${base}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(`${rel}/`, ...(await walk(path.join(dir, e.name), rel)));
    else out.push(rel);
  }
  return out;
}

contract('local directory', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-blobs-'));
  return {
    store: createBlobStore({ kind: 'local', dir }),
    files: () => walk(dir),
    done: () => fs.rm(dir, { recursive: true, force: true }),
  };
});

let s3: S3Server;
contract('S3 bucket (s3rver)', async () => {
  s3 = await startS3();
  return { store: createBlobStore(s3.config()), done: () => s3.stop() };
});

describe('S3 direct download', () => {
  let server: S3Server;
  before(async () => {
    server = await startS3('direct');
  });
  after(async () => {
    await server.stop();
  });

  test('downloadUrl: a presigned URL that serves the blob with the file name and type; null without direct download', async () => {
    const direct = createBlobStore(server.config({ directDownload: true }));
    const proxied = createBlobStore(server.config());
    const local = createBlobStore({ kind: 'local', dir: os.tmpdir() });
    try {
      await direct.put('a/b.zip', Buffer.from('PK-bytes'));
      const url = await direct.downloadUrl('a/b.zip', { fileName: 'artifacts.zip', contentType: 'application/octet-stream', ttlSeconds: 60 });
      assert.ok(url?.startsWith(`${server.endpoint}/direct/a/b.zip?`), url ?? 'null');
      assert.match(url!, /X-Amz-Signature=/);
      const res = await fetch(url!);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'PK-bytes');
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="artifacts.zip"; filename*=UTF-8''artifacts.zip`);
      assert.equal(await proxied.downloadUrl('a/b.zip', { fileName: 'x', contentType: 'x', ttlSeconds: 60 }), null);
      assert.equal(await local.downloadUrl('a/b.zip', { fileName: 'x', contentType: 'x', ttlSeconds: 60 }), null);
    } finally {
      await direct.close();
      await proxied.close();
    }
  });
});
