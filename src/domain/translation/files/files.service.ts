// Translation files: the file as it would be committed (pending edits written into the bytes at the
// component's head, every untouched byte kept), downloads (as stored, converted, or a zip of a
// component) and uploads (reference §1.5): translate, fuzzy, approve, suggest, replace, add (new strings,
// one commit) and source (a bilingual gettext component's new source strings).
//
// Units of the database meet entries of a file through what their id_hash is made of: the file is parsed
// as the scan parses it (with the template for monolingual components) and each parsed unit keyed by its
// context (monolingual) or its source and context, so a row finds its entry whatever the format's own
// ids look like.
import yazl from 'yazl';
import type { ComponentRow, TranslationProjectRow, TranslationRow, UnitRow } from '../../../db/schema.ts';
import type { Actor } from '../../access/actor.ts';
import { EXPORTERS, getExporter, type ExportMeta, type Exporter } from '../../../formats/exporters.ts';
import { FORMATS, getFormat } from '../../../formats/registry.ts';
import { allUnits, parseInBatches, parseOffThread, type UnitBatches } from '../../../formats/off-thread.ts';
import {
  FormatError,
  STATE_APPROVED,
  STATE_FUZZY,
  STATE_READONLY,
  STATE_TRANSLATED,
  type FileFormat,
  type NewEntry,
  type ParsedUnit,
  type UnitState,
  type UnitUpdate,
} from '../../../formats/types.ts';
import { DomainError, Errors } from '../../../lib/errors.ts';
import { ACTION } from '../changes/actions.ts';
import { recordChange } from '../changes/record.ts';
import { PLURAL_SEPARATOR } from '../components/scan.ts';
import type { TranslationDeps } from '../deps.ts';
import { actorAuthor } from '../units/edits.ts';
import { newlineOf } from '../../../formats/support/text.ts';
import { checksum, idHash } from '../units/hash.ts';
import { compileQuery, parseQuery, usesRegex } from '../search/query.ts';

/** A commit the repository refused (400, field errors or a message): its first message as the upload's 400 {"file": …}. */
function fileRefused(e: DomainError): DomainError {
  const d = e.detail;
  const first =
    typeof d === 'string' ? d : Array.isArray(d) ? d[0] : d && typeof d === 'object' ? Object.values(d as Record<string, unknown>).flat()[0] : undefined;
  return Errors.invalid({ file: first === undefined ? e.message : String(first) });
}

/** Who a rendered file is attributed to (H1's EditAuthor has this shape and more). */
export interface FileAuthor {
  name: string;
  email: string;
}

export const UPLOAD_METHODS = ['translate', 'approve', 'suggest', 'fuzzy', 'replace', 'source', 'add'] as const;
export type UploadMethod = (typeof UPLOAD_METHODS)[number];
export const UPLOAD_FUZZY = ['', 'process', 'approve'] as const;
export const UPLOAD_CONFLICTS = ['', 'ignore', 'replace-translated', 'replace-approved'] as const;

export interface UploadRequest {
  file: Buffer;
  method: UploadMethod;
  fuzzy: (typeof UPLOAD_FUZZY)[number];
  /** 'ignore' is read as '' (Weblate's validate_conflicts) */
  conflicts: '' | 'replace-translated' | 'replace-approved';
  author?: { name: string; email: string };
}

export interface UploadResult {
  not_found: number;
  skipped: number;
  accepted: number;
  total: number;
  result: boolean;
  count: number;
}

export interface RenderOptions {
  /** the units to write in; default: every pending unit of the translation */
  units?: UnitRow[];
  /** sets the PO header's Last-Translator and PO-Revision-Date */
  author?: FileAuthor;
  now?: Date;
}

/** translate-toolkit's header date, `%Y-%m-%d %H:%M%z`, in UTC. */
export function poRevisionDate(now: Date): string {
  return `${now.toISOString().slice(0, 16).replace('T', ' ')}+0000`;
}

export class TranslationFiles {
  constructor(private readonly deps: TranslationDeps) {}

  format(component: ComponentRow): FileFormat {
    const format = getFormat(component.file_format);
    if (!format) throw new FormatError(`Unknown file format: ${component.file_format}`);
    return format;
  }

  /** Units of this component are keyed by their context alone (a template and a format that is not bilingual-only). */
  monolingual(component: ComponentRow): boolean {
    return Boolean(component.template) && this.format(component).monolingual !== false;
  }

  /** A file of the component's repository at its head; null when it is not there. */
  async fileAt(component: ComponentRow, filePath: string): Promise<Buffer | null> {
    if (!component.head || !filePath) return null;
    const o = await this.deps.vcs.mirror(component.id).read(`${component.head}:${filePath}`);
    return o?.type === 'blob' && o.content ? o.content : null;
  }

  /** The translation's file as the repository has it (its bytes at the component's head). */
  async storedBytes(component: ComponentRow, translation: TranslationRow): Promise<Buffer> {
    if (!translation.filename) throw Errors.notFound();
    const atHead = await this.fileAt(component, translation.filename);
    if (atHead) return atHead;
    if (translation.revision) return this.deps.vcs.blob(this.deps.vcs.mirrorDir(component.id), translation.revision);
    throw Errors.notFound();
  }

  /** The template (monolingual base file) bytes a translation file is read with; undefined for bilingual components and the template itself. */
  async templateFor(component: ComponentRow, translation: TranslationRow): Promise<Buffer | undefined> {
    if (!this.monolingual(component) || translation.is_template) return undefined;
    const bytes = await this.fileAt(component, component.template);
    if (!bytes) throw new FormatError(`The template file ${component.template} was not found in the repository.`);
    return bytes;
  }

  /** The key a unit of this component is known by: its context for monolingual components, source and context otherwise (what its id_hash hashes). */
  unitKey(component: ComponentRow): (source: string, context: string) => string {
    return this.monolingual(component) ? (_source, context) => context : (source, context) => `${source}\0${context}`;
  }

  /**
   * The translation's file as it would be committed: its bytes at the component's head with `units`
   * (default: every pending unit of the translation) written in — format.write keeps untouched bytes —
   * and, when `author` is given, the PO header's PO-Revision-Date and Last-Translator set.
   * Units whose entry is not in the file (nor in the template) any more, or that the file makes
   * read-only, are left out, as Weblate skips them.
   */
  async render(component: ComponentRow, translation: TranslationRow, opts: RenderOptions = {}): Promise<Buffer> {
    const format = this.format(component);
    const current = await this.storedBytes(component, translation);
    const units =
      opts.units ??
      (await this.deps.db.kysely
        .selectFrom('units')
        .selectAll()
        .where('translation_id', '=', translation.id)
        .where('pending', '=', 1)
        .orderBy('position')
        .execute());
    let out = current;
    if (units.length) {
      const template = await this.templateFor(component, translation);
      const updates = this.updatesFor(component, translation, current, template, units);
      out = this.write(format, current, updates, { template, language: translation.language_code });
    }
    if (opts.author && format.updateHeader) {
      out = format.updateHeader(out, {
        'PO-Revision-Date': poRevisionDate(opts.now ?? new Date()),
        'Last-Translator': `${opts.author.name} <${opts.author.email}>`,
      });
    }
    return out;
  }

  /** The format updates that give the file these units' targets and states. */
  updatesFor(component: ComponentRow, translation: TranslationRow, bytes: Buffer, template: Buffer | undefined, units: UnitRow[]): UnitUpdate[] {
    const format = this.format(component);
    const key = this.unitKey(component);
    const parsed = format.parse(bytes, { template, isTemplate: Boolean(translation.is_template), language: translation.language_code }).units;
    const byKey = new Map(parsed.map((p) => [key(p.source.join(PLURAL_SEPARATOR), p.context), p]));
    // monolingual: an empty target of a key the file lacks is not added
    const own = template ? new Set(format.parse(bytes, { language: translation.language_code }).units.map((u) => u.id)) : null;
    const updates: UnitUpdate[] = [];
    const seen = new Set<string>();
    for (const u of units) {
      const p = byKey.get(key(u.source, u.context));
      if (!p || p.state === STATE_READONLY || seen.has(p.id)) continue;
      const target = u.target.split(PLURAL_SEPARATOR);
      if (own && !own.has(p.id) && target.every((t) => t === '')) continue;
      seen.add(p.id);
      updates.push({ id: p.id, target: p.plural ? target : [target.join(PLURAL_SEPARATOR)], state: u.state as UnitState });
    }
    return updates;
  }

  /** format.write; when the batch fails, unit by unit, leaving out the updates the format refuses. */
  write(format: FileFormat, bytes: Buffer, updates: UnitUpdate[], opts: { template?: Buffer; language?: string }): Buffer {
    try {
      return format.write(bytes, updates, opts);
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
    }
    let out = bytes;
    for (const u of updates) {
      try {
        out = format.write(out, [u], opts);
      } catch (e) {
        if (!(e instanceof FormatError)) throw e;
        this.deps.log.warn({ unit: u.id, err: e.message }, 'a pending translation could not be written into its file');
      }
    }
    return out;
  }

  // ---- downloads ------------------------------------------------------------------------------------

  /** The exporter `?format=` names, checked against the translation (Weblate's messages, 400 {"format": …}). */
  exporterFor(component: ComponentRow, name: string): Exporter {
    const exporter = getExporter(name);
    if (!exporter) throw Errors.invalid({ format: `Conversion to ${name} is not supported` });
    if (!exporter.supports(this.exportMeta(component))) throw Errors.invalid({ format: 'File format is not compatible with this translation' });
    return exporter;
  }

  /**
   * The conversions a translation of this component may be downloaded in (the translation page's
   * download menu), in the exporters' order: those `exporterFor` accepts. None for an unknown format.
   */
  conversions(component: ComponentRow): Pick<Exporter, 'name' | 'extension'>[] {
    let meta: ExportMeta;
    try {
      meta = this.exportMeta(component);
    } catch (e) {
      if (e instanceof FormatError) return [];
      throw e;
    }
    return [...EXPORTERS.values()].filter((e) => e.supports(meta)).map(({ name, extension }) => ({ name, extension }));
  }

  private exportMeta(component: ComponentRow, rest?: Omit<ExportMeta, 'component'>): ExportMeta {
    return {
      ...(rest as Omit<ExportMeta, 'component'>),
      component: { slug: component.slug, fileFormat: component.file_format, monolingual: this.monolingual(component) },
    };
  }

  /** The units of a translation in file order, those matching `q` when given (a user's regex runs under the search time limit). */
  async unitsMatching(translation: TranslationRow, q: string | undefined): Promise<UnitRow[]> {
    const k = this.deps.db.kysely;
    let s = k.selectFrom('units').selectAll().where('translation_id', '=', translation.id);
    if (q === undefined || q.trim() === '') return s.orderBy('position').execute();
    const node = parseQuery(q);
    s = s.where(compileQuery(node, this.deps.db.dialect)).orderBy('position');
    if (!usesRegex(node)) return s.execute();
    const query = s;
    return this.deps.db.limited.run(this.deps.config.searchTimeoutMs, (read) => read(query.compile()));
  }

  /** A translation converted by an exporter (Weblate's download with `format`). */
  async convert(
    project: TranslationProjectRow,
    component: ComponentRow,
    translation: TranslationRow,
    exporter: Exporter,
    opts: { q?: string; now?: Date } = {},
  ): Promise<Buffer> {
    const k = this.deps.db.kysely;
    const [language, source, plural] = await Promise.all([
      k.selectFrom('languages').select(['code', 'name']).where('id', '=', translation.language_id).executeTakeFirstOrThrow(),
      k.selectFrom('languages').select('code').where('id', '=', component.source_language_id).executeTakeFirst(),
      k.selectFrom('language_plurals').select(['number', 'formula']).where('id', '=', translation.plural_id).executeTakeFirst(),
    ]);
    const units = await this.unitsMatching(translation, opts.q);
    const meta = this.exportMeta(component, {
      project: { name: project.name, slug: project.slug },
      language,
      sourceLanguage: source?.code ?? 'en',
      plural: plural ?? { number: 2, formula: 'n != 1' },
      url: `${this.deps.externalUrl.replace(/\/+$/, '')}/translate/${project.slug}/${component.slug}/${language.code}/`,
      now: opts.now ?? new Date(),
    });
    return exporter.serialize(
      meta,
      units.map((u) => ({
        source: u.source.split(PLURAL_SEPARATOR),
        target: u.target.split(PLURAL_SEPARATOR),
        context: u.context,
        note: u.note,
        location: u.location,
        flags: u.flags,
        explanation: u.explanation,
        state: u.state,
        checksum: checksum(BigInt(u.id_hash)),
      })),
    );
  }

  translationsOf(component: ComponentRow): Promise<TranslationRow[]> {
    return this.deps.db.kysely.selectFrom('translations').selectAll().where('component_id', '=', component.id).orderBy('id').execute();
  }

  /** When a translation's file last changed: its last content change or the component's head commit, whichever is later. */
  async lastModified(component: ComponentRow, translations: TranslationRow[]): Promise<Date> {
    const commit = component.head ? await this.deps.vcs.mirror(component.id).commit(component.head) : null;
    let ms = commit ? commit.committer.time * 1000 : Date.parse(component.created_at);
    for (const t of translations) {
      if (t.last_change) ms = Math.max(ms, Date.parse(t.last_change));
      ms = Math.max(ms, Date.parse(t.created_at));
    }
    return new Date(ms);
  }

  /**
   * Every translation file of a component in one zip, at its path in the repository, pending edits
   * written in (Weblate's download of a component); with an exporter, each translation converted and
   * named like its file with the exporter's extension.
   */
  async zip(project: TranslationProjectRow, component: ComponentRow, translations: TranslationRow[], exporter?: Exporter): Promise<Buffer> {
    const zip = new yazl.ZipFile();
    const mtime = await this.lastModified(component, translations);
    const names = new Set<string>();
    for (const t of [...translations].sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0))) {
      if (!t.filename) continue;
      let name = t.filename;
      let bytes: Buffer;
      if (exporter) {
        name = `${t.filename.replace(/\.[^./]*$/, '')}.${exporter.extension}`;
        bytes = await this.convert(project, component, t, exporter);
      } else bytes = await this.render(component, t);
      if (names.has(name)) continue;
      names.add(name);
      zip.addBuffer(bytes, name, { mtime, mode: 0o100644 });
    }
    zip.end();
    const chunks: Buffer[] = [];
    for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  // ---- uploads ------------------------------------------------------------------------------------

  /**
   * The uploaded file's units: read as the component's format (a monolingual one without the template,
   * keyed by context), or, when that fails, as another format the content looks like. A file no format
   * reads is 400 {"file": the component format's message}. A big file is parsed off the event loop and
   * its units come in batches (formats/off-thread.ts): iterate them once, or discard them.
   */
  async parseUpload(component: ComponentRow, translation: TranslationRow, bytes: Buffer): Promise<UnitBatches> {
    const own = this.format(component);
    const monolingual = this.monolingual(component);
    const read = (format: FileFormat) =>
      parseInBatches(format, bytes, monolingual ? { isTemplate: true, language: translation.language_code } : { language: translation.language_code });
    let first: Error;
    try {
      return await read(own);
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      first = e;
    }
    const head = bytes
      .subarray(0, 200)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart();
    const candidates = head.startsWith('<')
      ? ['xliff', 'aresource']
      : head.startsWith('{')
        ? ['json', 'json-nested']
        : ['po', 'csv', 'strings', 'properties', 'yaml'];
    for (const id of candidates) {
      const format = FORMATS.get(id);
      if (!format || format === own) continue;
      try {
        const units = await read(format);
        if (units.total) return units;
      } catch (e) {
        if (!(e instanceof FormatError)) throw e;
      }
    }
    throw Errors.invalid({ file: first.message });
  }

  /**
   * An upload (reference §1.5), after the route checked permissions and validated the request: the
   * file's translated units (and its fuzzy ones when `fuzzy` says so) matched to the translation's units
   * (see matcher), applied through the unit edits in one transaction (one change 9 per unit), or added as
   * suggestions; `replace` commits the file as the translation's file. Nothing changes when the file does
   * not parse or its plural forms do not match the language.
   */
  async upload(actor: Actor, project: TranslationProjectRow, component: ComponentRow, translation: TranslationRow, req: UploadRequest): Promise<UploadResult> {
    const parsed = await this.parseUpload(component, translation, req.file);
    try {
      return await this.uploadParsed(actor, project, component, translation, req, parsed);
    } finally {
      parsed.discard();
    }
  }

  private async uploadParsed(
    actor: Actor,
    project: TranslationProjectRow,
    component: ComponentRow,
    translation: TranslationRow,
    req: UploadRequest,
    parsed: UnitBatches,
  ): Promise<UploadResult> {
    const perms = this.deps.writes.permissions;
    const scope = { project, component, translation };
    const total = parsed.total;
    const done = (not_found: number, skipped: number, accepted: number): UploadResult => ({
      not_found,
      skipped,
      accepted,
      total,
      result: accepted > 0,
      count: total,
    });
    const author = req.author ? { userId: await this.userIdOf(req.author.email), ...req.author } : undefined;

    if (req.method === 'replace') return this.replace(actor, component, translation, req, author, done);
    if (req.method === 'add') return this.addUpload(actor, component, translation, await allUnits(parsed), req, done);
    if (req.method === 'source') return this.sourceUpload(actor, component, translation, req);

    // what matching and the edits need (the edits read each row again, locked, by its id)
    const units = (await this.deps.db.kysely
      .selectFrom('units')
      .select(['id', 'translation_id', 'source', 'context', 'target', 'state'])
      .where('translation_id', '=', translation.id)
      .execute()) as UnitRow[];
    const find = this.matcher(component, units);
    const plural = await this.deps.db.kysely.selectFrom('language_plurals').select('number').where('id', '=', translation.plural_id).executeTakeFirst();
    const forms = plural?.number ?? 2;

    // Weblate's iterate_merge: fuzzy strings only when asked for, untranslated ones never (a batch of
    // the file at a time: only what matched is kept)
    const merge: { unit: UnitRow; target: string[]; state: UnitState }[] = [];
    let notFound = 0;
    let skipped = 0;
    for await (const batch of parsed)
      for (const p of batch) {
        const fuzzy = p.state === STATE_FUZZY;
        if (fuzzy ? req.fuzzy === '' : p.state < STATE_TRANSLATED || p.target.every((t) => t === '')) continue;
        const unit = find(p);
        if (!unit) {
          notFound++;
          continue;
        }
        const target = unit.source.includes(PLURAL_SEPARATOR) ? p.target : [p.target.join('')];
        if (unit.source.includes(PLURAL_SEPARATOR) && target.length !== forms) throw Errors.invalid({ file: 'Plural forms do not match the language.' });
        let state: UnitState = STATE_TRANSLATED;
        if (req.method === 'fuzzy' || (fuzzy && req.fuzzy === 'process')) state = STATE_FUZZY;
        else if (req.method === 'approve') state = STATE_APPROVED;
        merge.push({ unit, target, state });
      }

    if (req.method === 'suggest') {
      const wanted = merge.filter((m) => m.unit.state !== STATE_READONLY && m.unit.target !== m.target.join(PLURAL_SEPARATOR));
      // the suggestions take whole rows
      const rows = new Map<number, UnitRow>();
      const ids = wanted.map((m) => m.unit.id);
      for (let i = 0; i < ids.length; i += 500) {
        for (const u of await this.deps.db.kysely
          .selectFrom('units')
          .selectAll()
          .where('id', 'in', ids.slice(i, i + 500))
          .execute())
          rows.set(u.id, u);
      }
      const items = wanted.map((m) => ({ unit: rows.get(m.unit.id)!, target: m.target }));
      const added = items.length ? await this.deps.writes.suggestions.addMany(actor, items, author ? { author } : {}) : [];
      return done(notFound, skipped + merge.length - added.length, added.length);
    }

    const canEdit = await perms.can(actor, 'unit.edit', scope);
    const canReview = await perms.can(actor, 'unit.review', scope);
    const edits: { unit: UnitRow; target: string[]; state: UnitState }[] = [];
    for (const m of merge) {
      const u = m.unit;
      const unchanged = u.target === m.target.join(PLURAL_SEPARATOR) && u.state === m.state;
      if (
        (u.state >= STATE_TRANSLATED && u.state < STATE_READONLY && req.conflicts === '') ||
        (u.state === STATE_APPROVED && req.conflicts !== 'replace-approved') ||
        u.state === STATE_READONLY ||
        !canEdit ||
        (u.state === STATE_APPROVED && !canReview) ||
        unchanged
      ) {
        skipped++;
        continue;
      }
      edits.push(m);
    }
    if (edits.length) await this.deps.writes.edits.apply(actor, translation, edits, { action: ACTION.UPLOAD, ...(author ? { author } : {}) });
    return done(notFound, skipped, edits.length);
  }

  /** method=replace: the uploaded file becomes the translation's file, by a commit (pending edits committed first); change 54. */
  private async replace(
    actor: Actor,
    component: ComponentRow,
    translation: TranslationRow,
    req: UploadRequest,
    author: { userId: number | null; name: string; email: string } | undefined,
    done: (n: number, s: number, a: number) => UploadResult,
  ): Promise<UploadResult> {
    // the file must be the component's own format: it is committed as it is
    try {
      (
        await parseInBatches(this.format(component), req.file, this.monolingual(component) ? { isTemplate: true } : { language: translation.language_code })
      ).discard();
    } catch (e) {
      if (e instanceof FormatError) throw Errors.invalid({ file: e.message });
      throw e;
    }
    const repository = this.deps.writes.repository;
    await repository.commitPending(actor, component, { translationId: translation.id });
    const user = actor.user;
    const who = author ?? { userId: user?.id ?? null, name: user?.name || user?.username || 'Anonymous', email: user?.email ?? 'noreply@weblate.org' };
    const fresh = await this.deps.db.kysely.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
    try {
      await repository.commitFiles(fresh, [{ path: translation.filename, content: req.file }], who, `Upload of ${translation.filename}`);
    } catch (e) {
      if (e instanceof DomainError && e.status === 400) throw fileRefused(e);
      throw e;
    }
    const k = this.deps.db.kysely;
    await recordChange(k, {
      projectId: component.project_id,
      componentId: component.id,
      translationId: translation.id,
      unitId: null,
      languageId: translation.language_id,
      userId: actor.user?.id ?? null,
      authorId: who.userId,
      action: ACTION.REPLACE_UPLOAD,
      target: translation.filename,
    });
    const { n } = await k
      .selectFrom('units')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('translation_id', '=', translation.id)
      .executeTakeFirstOrThrow();
    return done(0, 0, Number(n));
  }

  /**
   * Whether method=add can work on this translation (Weblate's unit.add on it: the format writes new
   * entries, and a monolingual component takes new strings in its template only): null, or the hint.
   */
  addRefusal(component: ComponentRow, translation: TranslationRow): string | null {
    if (this.monolingual(component) && !translation.is_template && !translation.is_source) return 'Try adding to the source instead of the translation.';
    if (this.monolingual(component) && !component.edit_template) return 'Check your permissions or use different translation object.';
    if (!getFormat(component.file_format)?.append) return 'Check your permissions or use different translation object.';
    return null;
  }

  /** method=source works where Weblate's update_bulk (msgmerge) does: the source translation of a bilingual gettext component. */
  sourceAllowed(component: ComponentRow): boolean {
    return component.file_format === 'po' && !this.monolingual(component);
  }

  /**
   * method=add (Weblate's handle_add_upload): every string of the file the translation lacks (matched as
   * the other methods match) is added, as POST …/units/ adds one — written into the file(s) and committed
   * at once, the rows created by the rescan, a change 31 each — but all of them in ONE commit. Strings the
   * translation has are skipped; fuzzy ones follow `fuzzy` as iterate_merge does; untranslated strings
   * are added too (only_translated=False), with an empty state.
   */
  private async addUpload(
    actor: Actor,
    component: ComponentRow,
    translation: TranslationRow,
    parsed: ParsedUnit[],
    req: UploadRequest,
    done: (n: number, s: number, a: number) => UploadResult,
  ): Promise<UploadResult> {
    const k = this.deps.db.kysely;
    const monolingual = this.monolingual(component);
    const format = getFormat(component.file_format);
    if (!format?.append) throw Errors.invalid({ method: 'This method is not available here. Check your permissions or use different translation object.' });
    const units = (await k
      .selectFrom('units')
      .select(['id', 'translation_id', 'source', 'context', 'target', 'state'])
      .where('translation_id', '=', translation.id)
      .execute()) as UnitRow[];
    const find = this.matcher(component, units);
    const plural = await k.selectFrom('language_plurals').select('number').where('id', '=', translation.plural_id).executeTakeFirst();
    const forms = plural?.number ?? 2;
    const seen = new Set<string>();
    const entries: { context: string; source: string[]; target: string[]; state: number; hash: string }[] = [];
    let skipped = 0;
    for (const p of parsed) {
      let state: number = p.target.some((t) => t !== '') ? STATE_TRANSLATED : 0;
      if (p.state === STATE_FUZZY) {
        if (req.fuzzy === '') continue;
        state = req.fuzzy === 'process' ? STATE_FUZZY : STATE_TRANSLATED;
      }
      const key = monolingual ? p.context : `${p.source.join(PLURAL_SEPARATOR)}\0${p.context}`;
      if (find(p) || seen.has(key) || (monolingual && !p.context)) {
        skipped++;
        continue;
      }
      const source = monolingual ? [p.context] : p.source;
      let target = monolingual ? p.target.slice(0, 1) : p.target;
      if ((source.length > 1 || target.length > 1) && !format.appendsPlurals) {
        skipped++;
        continue;
      }
      if (!monolingual && source.length > 1 && !translation.is_source) {
        target = target.slice(0, forms);
        while (target.length < forms) target.push('');
      }
      if (!target.some((t) => t !== '')) state = 0;
      seen.add(key);
      entries.push({ context: p.context, source, target, state, hash: idHash(source, p.context, monolingual).toString() });
    }
    if (!entries.length) return done(0, skipped, 0);

    const repository = this.deps.writes.repository;
    await repository.commitPending(actor, component);
    const fresh = await k.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
    // the files: the template (monolingual), this translation's file, or (the bilingual source) every translation file
    const targets: { filename: string; empty: boolean }[] = monolingual
      ? [{ filename: fresh.template, empty: false }]
      : translation.is_source
        ? (
            await k
              .selectFrom('translations')
              .select('filename')
              .where('component_id', '=', fresh.id)
              .where('is_source', '=', 0)
              .where('filename', '!=', '')
              .execute()
          ).map((t) => ({ filename: t.filename, empty: true }))
        : [{ filename: translation.filename, empty: false }];
    const files: { path: string; content: Buffer }[] = [];
    for (const f of targets) {
      if (files.some((x) => x.path === f.filename)) continue;
      const bytes = (await this.fileAt(fresh, f.filename)) ?? Buffer.alloc(0);
      const news = entries.map((e) => ({
        context: e.context,
        source: e.source,
        target: f.empty ? e.source.map(() => '') : e.target.length ? e.target : [''],
        state: f.empty ? 0 : e.state,
        monolingual,
      }));
      files.push({ path: f.filename, content: appendAll(format, bytes, news) });
    }
    if (!files.length) throw Errors.invalid({ method: 'This method is not available here. Check your permissions or use different translation object.' });
    const who = req.author ? { userId: await this.userIdOf(req.author.email), ...req.author } : actorAuthor(actor);
    try {
      await repository.commitFiles(
        fresh,
        files,
        who,
        `Added ${entries.length === 1 ? 'string' : `${entries.length} strings`} by upload\n\nAdded through the translation API.\n`,
      );
    } catch (e) {
      if (e instanceof DomainError && e.status === 400) throw fileRefused(e);
      throw e;
    }
    // a change 31 for each string the rescan created
    const hashes = entries.map((e) => e.hash);
    const added: UnitRow[] = [];
    for (let i = 0; i < hashes.length; i += 500) {
      added.push(
        ...(await k
          .selectFrom('units')
          .selectAll()
          .where('translation_id', '=', translation.id)
          .where('id_hash', 'in', hashes.slice(i, i + 500))
          .execute()),
      );
    }
    await recordChange(
      k,
      added.map((u) => ({
        projectId: fresh.project_id,
        componentId: fresh.id,
        translationId: translation.id,
        unitId: u.id,
        languageId: translation.language_id,
        userId: actor.user?.id ?? null,
        authorId: who.userId ?? actor.user?.id ?? null,
        action: ACTION.NEW_UNIT,
        target: u.target,
      })),
    );
    return done(0, skipped + entries.length - added.length, added.length);
  }

  /**
   * method=source (Weblate's handle_source, gettext only): the uploaded file is the new set of source
   * strings. Every translation file keeps the entries (and their translations) of strings still in it,
   * loses those that are not (msgmerge would keep them as obsolete `#~` entries; here they are removed,
   * as DELETE /api/units/ removes one), and gets the new ones, untranslated, at its end; the new_base
   * (when the component has one in the repository) becomes the uploaded file. One commit, pending edits
   * committed first; the rescan updates the rows. The answer counts the source strings afterwards.
   */
  private async sourceUpload(actor: Actor, component: ComponentRow, translation: TranslationRow, req: UploadRequest): Promise<UploadResult> {
    const format = this.format(component);
    if (!this.sourceAllowed(component) || !format.append || !format.remove) {
      throw Errors.invalid({ method: 'This method is not available here. Check your permissions or use different translation object.' });
    }
    let uploaded: ParsedUnit[];
    try {
      uploaded = (await parseOffThread(format, req.file, { language: translation.language_code })).units;
    } catch (e) {
      if (e instanceof FormatError) throw Errors.invalid({ file: e.message });
      throw e;
    }
    const key = (source: string[], context: string) => `${source.join(PLURAL_SEPARATOR)}\0${context}`;
    const wanted = new Map<string, ParsedUnit>();
    for (const u of uploaded) if (!wanted.has(key(u.source, u.context))) wanted.set(key(u.source, u.context), u);
    const k = this.deps.db.kysely;
    const repository = this.deps.writes.repository;
    await repository.commitPending(actor, component);
    const fresh = await k.selectFrom('components').selectAll().where('id', '=', component.id).executeTakeFirstOrThrow();
    const translations = await k
      .selectFrom('translations')
      .selectAll()
      .where('component_id', '=', fresh.id)
      .where('is_source', '=', 0)
      .where('filename', '!=', '')
      .orderBy('id')
      .execute();
    const files: { path: string; content: Buffer }[] = [];
    for (const tr of translations) {
      if (files.some((f) => f.path === tr.filename)) continue;
      let bytes = await this.fileAt(fresh, tr.filename);
      if (!bytes) continue;
      const opts = { language: tr.language_code };
      const original = bytes;
      let entries = format.parse(bytes, opts).units;
      const have = new Set(entries.map((e) => key(e.source, e.context)));
      for (const e of [...entries]) {
        if (e.source.join('') === '' || wanted.has(key(e.source, e.context))) continue;
        const out = format.remove(bytes, e.id, opts, entries);
        if (!out) throw Errors.invalid({ file: `The string "${e.source[0].slice(0, 60)}" could not be removed from ${tr.filename}.` });
        bytes = out;
        entries = format.parse(bytes, opts).units;
      }
      const news = [...wanted]
        .filter(([k2, u]) => !have.has(k2) && u.source.join('') !== '')
        .map(([, u]) => ({ context: u.context, source: u.source, target: u.source.map(() => ''), state: 0, monolingual: false }));
      bytes = appendAll(format, bytes, news);
      if (!bytes.equals(original)) files.push({ path: tr.filename, content: bytes });
    }
    if (fresh.new_base && (await this.fileAt(fresh, fresh.new_base))) files.push({ path: fresh.new_base, content: req.file });
    if (files.length) {
      const user = actor.user;
      const who = req.author
        ? { userId: await this.userIdOf(req.author.email), ...req.author }
        : { userId: user?.id ?? null, name: user?.name || user?.username || 'Anonymous', email: user?.email ?? 'noreply@weblate.org' };
      try {
        await repository.commitFiles(fresh, files, who, 'Update source strings by upload\n\nUpdated through the translation API.\n');
      } catch (e) {
        if (e instanceof DomainError && e.status === 400) throw fileRefused(e);
        throw e;
      }
    }
    const { n } = await k
      .selectFrom('units')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('translation_id', '=', translation.id)
      .executeTakeFirstOrThrow();
    const count = Number(n);
    return { not_found: 0, skipped: 0, accepted: count, total: count, result: count > 0, count };
  }

  /**
   * How an uploaded unit finds its row (Weblate's UnitQuerySet.get_unit, a fuzzy match for imports): by
   * what its id_hash is made of (source and context; the key alone of a monolingual unit), then a
   * bilingual unit by its source with an empty context, then by its source alone when one unit has it.
   */
  private matcher(component: ComponentRow, units: UnitRow[]): (p: ParsedUnit) => UnitRow | undefined {
    if (this.monolingual(component)) {
      const byKey = new Map(units.map((u) => [u.context, u]));
      return (p) => byKey.get(p.context);
    }
    const byId = new Map(units.map((u) => [`${u.source}\0${u.context}`, u]));
    const bySource = new Map<string, UnitRow | null>();
    for (const u of units) bySource.set(u.source, bySource.has(u.source) ? null : u);
    return (p) => {
      const source = p.source.join(PLURAL_SEPARATOR);
      return byId.get(`${source}\0${p.context}`) ?? byId.get(`${source}\0`) ?? bySource.get(source) ?? undefined;
    };
  }

  private async userIdOf(email: string): Promise<number | null> {
    if (!email) return null;
    const u = await this.deps.db.kysely.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    return u?.id ?? null;
  }
}

/**
 * New entries appended to a file, in linear time. PO's append reads only the file's newline and how
 * it ends, so each entry is appended to a stand-in with the same newline and the same last characters
 * and the piece it added is kept; other formats append to the whole file each time.
 */
function appendAll(format: FileFormat, bytes: Buffer, entries: NewEntry[]): Buffer {
  const append = format.append!;
  if (!entries.length) return bytes;
  const text = bytes.toString('utf8');
  if ((format.id !== 'po' && format.id !== 'po-mono') || text.length < 8) {
    let out = bytes;
    for (const e of entries) out = append(out, e);
    return out;
  }
  const nl = newlineOf(text);
  const prefix = `x${nl}`;
  const pieces: string[] = [];
  let tail = text.slice(-4);
  for (const e of entries) {
    const seed = prefix + tail;
    const piece = append(Buffer.from(seed, 'utf8'), e).toString('utf8').slice(seed.length);
    pieces.push(piece);
    tail = (tail + piece).slice(-4);
  }
  return Buffer.from(text + pieces.join(''), 'utf8');
}
