// extractArchive: a normal export archive comes out whole; every unsafe archive (crafted here header by
// header) is refused with ArchiveError and leaves nothing behind, inside or outside `dest`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, gzipSync } from 'node:zlib';
import { c as tarCreate, Header, Pax } from 'tar';
import { ArchiveError, extractArchive, SIZE_MESSAGE, TIMEOUT_MESSAGE } from '../../../src/domain/import-export/archive/extract.ts';

// one suite: the shared fixture of `before` lives from this file's first test to its last, also in a shard
describe('import-extract', () => {
  let dir: string;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'hearth-extract-'));
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  interface Raw {
    path: string;
    type?: string;
    body?: string | Buffer;
    linkpath?: string;
    /** a pax header before this one (e.g. a long path) */
    pax?: Record<string, string>;
    /** a GNU long-name entry before this one */
    gnuLongPath?: string;
  }

  function block(data: Buffer): Buffer {
    const pad = (512 - (data.length % 512)) % 512;
    return Buffer.concat([data, Buffer.alloc(pad)]);
  }

  /** A tar stream from raw headers: nothing is normalised, so unsafe entries stay unsafe. */
  function rawTar(entries: Raw[]): Buffer {
    const parts: Buffer[] = [];
    for (const e of entries) {
      if (e.pax) parts.push(new Pax({ ...e.pax, mtime: new Date(0) } as any).encode());
      if (e.gnuLongPath) {
        const name = Buffer.from(`${e.gnuLongPath}\0`);
        const h = Buffer.alloc(512);
        new Header({ path: '././@LongLink', type: 'NextFileHasLongPath', size: name.length, mode: 0o644, mtime: new Date(0) } as any).encode(h);
        parts.push(h, block(name));
      }
      const body = typeof e.body === 'string' ? Buffer.from(e.body) : (e.body ?? Buffer.alloc(0));
      const type = e.type ?? 'File';
      const h = Buffer.alloc(512);
      new Header({
        path: e.path,
        type,
        size: type === 'File' ? body.length : 0,
        mode: type === 'Directory' ? 0o755 : 0o644,
        linkpath: e.linkpath,
        mtime: new Date(0),
        devmaj: 1,
        devmin: 3,
      } as any).encode(h);
      parts.push(h);
      if (type === 'File') parts.push(block(body));
    }
    parts.push(Buffer.alloc(1024));
    return Buffer.concat(parts);
  }

  let n = 0;
  async function writeArchive(bytes: Buffer): Promise<string> {
    const file = path.join(dir, `a${++n}.tar.gz`);
    await fs.writeFile(file, bytes);
    return file;
  }

  const fresh = () => path.join(dir, `out${++n}`, 'x');
  const exists = (p: string) =>
    fs.stat(p).then(
      () => true,
      () => false,
    );

  async function refused(archive: string, limits: { maxBytes: number; timeoutMs: number }, message: string | RegExp): Promise<string> {
    const dest = fresh();
    await assert.rejects(extractArchive(archive, dest, limits), (err: Error) => {
      assert.ok(err instanceof ArchiveError, `ArchiveError expected, got ${err.constructor.name}: ${err.message}`);
      if (typeof message === 'string') assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    });
    assert.equal(await exists(dest), false, 'dest removed');
    return dest;
  }

  const NO_LIMITS = { maxBytes: 0, timeoutMs: 0 };

  describe('extractArchive', () => {
    test('a normal archive made by node-tar comes out whole', async () => {
      const src = path.join(dir, 'src');
      await fs.mkdir(path.join(src, 'tree', 'project'), { recursive: true });
      await fs.writeFile(path.join(src, 'VERSION'), '0.2.4');
      await fs.writeFile(path.join(src, 'tree', 'project.json'), '{"description":"d"}');
      const big = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
      await fs.writeFile(path.join(src, 'tree', 'project', 'issues.ndjson'), big);
      const archive = path.join(dir, 'normal.tar.gz');
      await tarCreate({ gzip: true, file: archive, cwd: src }, ['VERSION', 'tree']);
      const dest = fresh();
      await extractArchive(archive, dest, { maxBytes: 10 * 1024 * 1024, timeoutMs: 10_000 });
      assert.equal(await fs.readFile(path.join(dest, 'VERSION'), 'utf8'), '0.2.4');
      assert.equal(await fs.readFile(path.join(dest, 'tree', 'project.json'), 'utf8'), '{"description":"d"}');
      assert.ok(big.equals(await fs.readFile(path.join(dest, 'tree', 'project', 'issues.ndjson'))));
      const st = await fs.stat(path.join(dest, 'VERSION'));
      assert.equal(st.mode & 0o777, 0o600);
    });

    test('./ prefixes, a root entry, a long pax name and a GNU long name inside dest are fine', async () => {
      const long = `${'d'.repeat(120)}/${'f'.repeat(120)}.ndjson`;
      const archive = await writeArchive(
        gzipSync(
          rawTar([
            { path: './', type: 'Directory' },
            { path: './VERSION', body: '0.2.4' },
            { path: 'short-pax', pax: { path: `pax/${long}` }, body: 'p' },
            { path: 'short-gnu', gnuLongPath: `gnu/${long}`, body: 'g' },
          ]),
        ),
      );
      const dest = fresh();
      await extractArchive(archive, dest, NO_LIMITS);
      assert.equal(await fs.readFile(path.join(dest, 'VERSION'), 'utf8'), '0.2.4');
      assert.equal(await fs.readFile(path.join(dest, 'pax', long), 'utf8'), 'p');
      assert.equal(await fs.readFile(path.join(dest, 'gnu', long), 'utf8'), 'g');
      assert.deepEqual((await fs.readdir(dest)).sort(), ['VERSION', 'gnu', 'pax']);
    });

    test('dest must not exist (nothing of the caller removed)', async () => {
      const archive = await writeArchive(gzipSync(rawTar([{ path: 'VERSION', body: '1' }])));
      const dest = fresh();
      await fs.mkdir(dest, { recursive: true });
      await fs.writeFile(path.join(dest, 'keep'), 'k');
      await assert.rejects(extractArchive(archive, dest, NO_LIMITS), { code: 'EEXIST' });
      assert.equal(await fs.readFile(path.join(dest, 'keep'), 'utf8'), 'k');
    });

    test('a missing archive file: the error as is, dest removed', async () => {
      const dest = fresh();
      await assert.rejects(extractArchive(path.join(dir, 'no-such.tar.gz'), dest, NO_LIMITS), { code: 'ENOENT' });
      assert.equal(await exists(dest), false);
    });

    test('a symbolic link is refused', async () => {
      const archive = await writeArchive(
        gzipSync(
          rawTar([
            { path: 'VERSION', body: '1' },
            { path: 'link', type: 'SymbolicLink', linkpath: 'VERSION' },
          ]),
        ),
      );
      await refused(archive, NO_LIMITS, 'Invalid file: "link" is a symbolic link');
    });

    test('a link pointing out, then a file through it: refused, nothing written outside', async () => {
      const outside = path.join(dir, `outside${++n}`);
      await fs.mkdir(outside);
      const archive = await writeArchive(
        gzipSync(
          rawTar([
            { path: 'out', type: 'SymbolicLink', linkpath: outside },
            { path: 'out/pwned', body: 'x' },
          ]),
        ),
      );
      await refused(archive, NO_LIMITS, 'Invalid file: "out" is a symbolic link');
      assert.deepEqual(await fs.readdir(outside), []);
    });

    test('a hard link is refused', async () => {
      const archive = await writeArchive(gzipSync(rawTar([{ path: 'passwd', type: 'Link', linkpath: '/etc/passwd' }])));
      await refused(archive, NO_LIMITS, 'Invalid file: "passwd" is a hard link');
    });

    test('device files and FIFOs are refused', async () => {
      for (const [type, word] of [
        ['CharacterDevice', 'character device'],
        ['BlockDevice', 'block device'],
        ['FIFO', 'FIFO'],
      ]) {
        const archive = await writeArchive(gzipSync(rawTar([{ path: 'dev', type }])));
        await refused(archive, NO_LIMITS, `Invalid file: "dev" is a ${word}`);
      }
    });

    test('../ segments, absolute paths, and long names that do the same are refused', async () => {
      const outside = path.join(dir, `escape${++n}`);
      const cases: Array<[Raw[], string]> = [
        [[{ path: '../x', body: 'x' }], 'Invalid file: "../x" leaves the archive'],
        [[{ path: 'tree/../../x', body: 'x' }], 'Invalid file: "tree/../../x" leaves the archive'],
        [[{ path: 'a/..', type: 'Directory' }], 'Invalid file: "a/.." leaves the archive'],
        [[{ path: '/abs/x', body: 'x' }], 'Invalid file: "/abs/x" is an absolute path'],
        [[{ path: outside, body: 'x' }], `Invalid file: ${JSON.stringify(outside)} is an absolute path`],
        [[{ path: 'ok', pax: { path: '../pax-escape' }, body: 'x' }], 'Invalid file: "../pax-escape" leaves the archive'],
        [[{ path: 'ok', pax: { path: '/pax-abs' }, body: 'x' }], 'Invalid file: "/pax-abs" is an absolute path'],
        [[{ path: 'ok', gnuLongPath: `${'a/'.repeat(60)}${'../'.repeat(80)}gnu-escape`, body: 'x' }], /^Invalid file: ".*" leaves the archive$/],
        [
          [
            { path: 'VERSION', body: '1' },
            { path: '..', type: 'Directory' },
          ],
          'Invalid file: ".." leaves the archive',
        ],
      ] as any;
      for (const [entries, message] of cases) {
        const archive = await writeArchive(gzipSync(rawTar(entries)));
        await refused(archive, NO_LIMITS, message);
      }
      assert.equal(await exists(outside), false);
      assert.equal(await exists(path.join(dir, 'pax-escape')), false);
      assert.equal(await exists('/pax-abs'), false);
    });

    test('a NUL byte in a pax path ends the name there (node-tar), inside dest', async () => {
      const archive = await writeArchive(gzipSync(rawTar([{ path: 'ok', pax: { path: 'a\0/../../b' }, body: 'x' }])));
      const dest = fresh();
      await extractArchive(archive, dest, NO_LIMITS);
      assert.deepEqual(await fs.readdir(dest), ['a']);
      assert.equal(await exists(path.join(dir, 'b')), false);
    });

    test('a gzip bomb fails fast, with little written', async () => {
      // one 200 MiB file of zeros: ~200 KiB compressed
      const archive = path.join(dir, 'bomb.tar.gz');
      const size = 200 * 1024 * 1024;
      const h = Buffer.alloc(512);
      new Header({ path: 'tree/project/issues.ndjson', type: 'File', size, mode: 0o644, mtime: new Date(0) } as any).encode(h);
      let left = size;
      const zeros = Buffer.alloc(1024 * 1024);
      const body = new Readable({
        read() {
          if (left === size) this.push(h);
          if (left <= 0) return this.push(null);
          const k = Math.min(left, zeros.length);
          left -= k;
          this.push(zeros.subarray(0, k));
          if (left === 0) this.push(Buffer.alloc(1024));
        },
      });
      await pipeline(body, createGzip(), createWriteStream(archive));
      assert.ok((await fs.stat(archive)).size < 1024 * 1024);

      // refused at the limit (the message comes from the byte count, not from the end of the archive)
      await refused(archive, { maxBytes: 10 * 1024 * 1024, timeoutMs: 0 }, SIZE_MESSAGE);

      // the same archive, unlimited in size but allowed 50 ms: the timeout stops it
      await refused(archive, { maxBytes: 0, timeoutMs: 50 }, TIMEOUT_MESSAGE);
    });

    test('the size counts decompressed bytes, headers included; at the limit it passes', async () => {
      const tar = rawTar([{ path: 'VERSION', body: '0.2.4' }]);
      const archive = await writeArchive(gzipSync(tar));
      await extractArchive(archive, fresh(), { maxBytes: tar.length, timeoutMs: 0 });
      await refused(archive, { maxBytes: tar.length - 1, timeoutMs: 0 }, SIZE_MESSAGE);
    });

    test('not gzip, truncated gzip, corrupt tar, gzip inside gzip, empty: refused', async () => {
      const good = gzipSync(
        rawTar([
          { path: 'VERSION', body: '0.2.4' },
          { path: 'tree/project.json', body: 'x'.repeat(5000) },
        ]),
      );
      await refused(await writeArchive(Buffer.from('this is not an archive at all\n')), NO_LIMITS, /^Invalid file: not a valid gzip archive/);
      await refused(await writeArchive(rawTar([{ path: 'VERSION', body: '1' }])), NO_LIMITS, /^Invalid file: not a valid gzip archive/);
      await refused(
        await writeArchive(good.subarray(0, Math.floor(good.length / 2))),
        NO_LIMITS,
        /^Invalid file: not a valid gzip archive \(unexpected end of file\)/,
      );
      await refused(await writeArchive(gzipSync(Buffer.alloc(4096, 0x41))), NO_LIMITS, /^Invalid file: not a valid tar archive/);
      // a tar cut inside an entry's body
      const tar = rawTar([{ path: 'VERSION', body: 'y'.repeat(3000) }]);
      await refused(await writeArchive(gzipSync(tar.subarray(0, 1024))), NO_LIMITS, /^Invalid file: not a valid tar archive/);
      await refused(await writeArchive(gzipSync(good)), NO_LIMITS, 'Invalid file: not a tar archive');
      await refused(await writeArchive(gzipSync(Buffer.alloc(0))), NO_LIMITS, /^Invalid file: not a valid tar archive/);
      await refused(await writeArchive(Buffer.alloc(0)), NO_LIMITS, /^Invalid file/);
    });

    test('a file where a directory was: refused', async () => {
      const archive = await writeArchive(
        gzipSync(
          rawTar([
            { path: 'tree', body: 'x' },
            { path: 'tree/project.json', body: '{}' },
          ]),
        ),
      );
      await refused(archive, NO_LIMITS, /^Invalid file: "tree(\/project.json)?" cannot be written \((ENOTDIR|EEXIST|EISDIR)\)$/);
    });

    test('empty files, and a path written twice (the later entry wins, as tar does)', async () => {
      const archive = await writeArchive(
        gzipSync(
          rawTar([
            { path: 'empty', body: '' },
            { path: 'twice', body: 'first, longer' },
            { path: 'dir/empty', body: '' },
            { path: 'twice', body: 'second' },
          ]),
        ),
      );
      const dest = fresh();
      await extractArchive(archive, dest, NO_LIMITS);
      assert.equal(await fs.readFile(path.join(dest, 'empty'), 'utf8'), '');
      assert.equal(await fs.readFile(path.join(dest, 'dir', 'empty'), 'utf8'), '');
      assert.equal(await fs.readFile(path.join(dest, 'twice'), 'utf8'), 'second');
    });

    test('many small files: all written, one at a time', async () => {
      const entries: Raw[] = [];
      for (let i = 0; i < 500; i++) entries.push({ path: `uploads/f${i}`, body: `${i}` });
      const archive = await writeArchive(gzipSync(rawTar(entries)));
      const dest = fresh();
      await extractArchive(archive, dest, NO_LIMITS);
      const names = await fs.readdir(path.join(dest, 'uploads'));
      assert.equal(names.length, 500);
      assert.equal(await fs.readFile(path.join(dest, 'uploads', 'f499'), 'utf8'), '499');
    });

    test('a JSON document over 50 MB (a line of a relation file, project.json) is refused while extracting; at the limit it passes', async () => {
      const MB50 = 50 * 1024 * 1024;
      const line = (n: number) => Buffer.concat([Buffer.from('{"t":"'), Buffer.alloc(n - 8, 0x61), Buffer.from('"}')]);
      // many short lines, then the long one (each line is counted on its own), CRLF endings
      const longest = Buffer.concat([Buffer.from('{"a":1}\r\n'.repeat(1000)), line(MB50), Buffer.from('\r\n{"a":2}\n')]);
      const ok = await writeArchive(
        gzipSync(
          rawTar([
            { path: 'tree/project/labels.ndjson', body: longest },
            { path: 'tree/project.json', body: line(MB50) },
          ]),
        ),
      );
      const dest = fresh();
      await extractArchive(ok, dest, NO_LIMITS);
      assert.equal((await fs.stat(path.join(dest, 'tree/project/labels.ndjson'))).size, longest.length);
      const over = await writeArchive(
        gzipSync(rawTar([{ path: 'tree/project/labels.ndjson', body: Buffer.concat([Buffer.from('{"a":1}\n'), line(MB50 + 2)]) }])),
      );
      await refused(over, NO_LIMITS, 'JSON exceeds 50 MB limit in labels.ndjson');
      await refused(
        await writeArchive(gzipSync(rawTar([{ path: 'tree/project.json', body: line(MB50 + 2) }]))),
        NO_LIMITS,
        'JSON exceeds 50 MB limit in project.json',
      );
      // other files (the bundle, uploads) have no lines to count
      await extractArchive(await writeArchive(gzipSync(rawTar([{ path: 'project.bundle', body: Buffer.alloc(MB50 + 10, 0x61) }]))), fresh(), NO_LIMITS);
    });
  });
});
