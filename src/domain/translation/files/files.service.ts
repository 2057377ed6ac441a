// Translation files: the file as it would be committed (pending edits written into the bytes at the
// component's head, every untouched byte kept), downloads (as stored, converted, or a zip of a
// component) and uploads (reference §1.5).
//
// Units of the database meet entries of a file through their id_hash: the file is parsed as the scan
// parses it (with the template for monolingual components) and each parsed unit hashed the same way,
// so a row finds its entry whatever the format's own ids look like.
import type { ComponentRow, TranslationRow, UnitRow } from '../../../db/schema.ts';
import { getFormat } from '../../../formats/registry.ts';
import { FormatError, STATE_READONLY, type FileFormat, type ParsedUnit, type UnitState, type UnitUpdate } from '../../../formats/types.ts';
import { Errors } from '../../../lib/errors.ts';
import { PLURAL_SEPARATOR } from '../components/scan.ts';
import type { TranslationDeps } from '../deps.ts';
import { idHash } from '../units/hash.ts';

/** Who a rendered file is attributed to (H1's EditAuthor has this shape and more). */
export interface FileAuthor {
  name: string;
  email: string;
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

  /** Parse a translation's file the way the scan does: the units with their id_hash. */
  parseAs(component: ComponentRow, translation: TranslationRow, bytes: Buffer, template: Buffer | undefined): { unit: ParsedUnit; idHash: string }[] {
    const format = this.format(component);
    const monolingual = this.monolingual(component);
    const parsed = format.parse(bytes, { template, isTemplate: Boolean(translation.is_template), language: translation.language_code });
    return parsed.units.map((unit) => ({ unit, idHash: idHash(unit.source, unit.context, monolingual).toString() }));
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
    const parsed = this.parseAs(component, translation, bytes, template);
    const byHash = new Map(parsed.map((p) => [p.idHash, p.unit]));
    // monolingual: an empty target of a key the file lacks is not added
    const own = template ? new Set(format.parse(bytes, { language: translation.language_code }).units.map((u) => u.id)) : null;
    const updates: UnitUpdate[] = [];
    const seen = new Set<string>();
    for (const u of units) {
      const p = byHash.get(u.id_hash);
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
}
