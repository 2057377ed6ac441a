// Adding and removing a translation (a language) of a component: Weblate's Component.add_new_language
// and Translation.remove, as the API calls them (views.py translations POST, TranslationViewSet.destroy).
//
// Adding writes the new file at the path the file mask gives for the language (`*` → the code in the
// component's language code style) through the repository's one commit path (writes.repository.
// commitFiles: a commit on the local branch authored by the actor, the component's add_message, the rows
// then follow by a rescan), and records 48 "Added new language". The file is:
// - a copy of `new_base` when the component has one (a PO template gets its Language and Plural-Forms
//   header for the language), else
// - the format's empty file (Weblate's `new_translation` of each format: an empty JSON object, an empty
//   Android <resources>, a PO file with only its header …); monolingual translations start empty, as in
//   Weblate (new_base is how a component asks for every key with an empty value).
// Removing commits the file's removal (delete_message); the rescan drops the rows (units, their
// suggestions and comments) and records 25 "Removed translation".
import type { ComponentRow, LanguageRow, TranslationProjectRow, TranslationRow } from '../../../db/schema.ts';
import { getFormat } from '../../../formats/registry.ts';
import type { FileFormat } from '../../../formats/types.ts';
import { Errors } from '../../../lib/errors.ts';
import type { Actor } from '../../access/actor.ts';
import { ACTION } from '../changes/actions.ts';
import { recordChange } from '../changes/record.ts';
import type { TranslationDeps } from '../deps.ts';
import { DEFAULT_ADD_MESSAGE, DEFAULT_DELETE_MESSAGE } from '../repository/messages.ts';

const PO_HEADER =
  'msgid ""\nmsgstr ""\n"MIME-Version: 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n"X-Generator: Weblate\\n"\n';

/** The file a new translation starts from when the component has no `new_base`, per format. */
const EMPTY: Record<string, string> = {
  po: PO_HEADER,
  'po-mono': PO_HEADER,
  json: '{}\n',
  'json-nested': '{}\n',
  i18next: '{}\n',
  i18nextv4: '{}\n',
  aresource: '<?xml version="1.0" encoding="utf-8"?>\n<resources></resources>\n',
  properties: '',
  strings: '',
  yaml: '{}\n',
};

/** Weblate's language code styles, as far as codes here go (pt_BR, sr@latin …). */
function styled(code: string, style: string): string {
  switch (style) {
    case 'posix':
      return code.replace(/-/g, '_');
    case 'posix_lowercase':
      return code.replace(/-/g, '_').toLowerCase();
    case 'bcp':
      return code.replace(/_/g, '-');
    case 'bcp_lower':
      return code.replace(/_/g, '-').toLowerCase();
    case 'android':
      return code.replace(/[_-]([A-Za-z]{2})$/, '-r$1');
    case 'linux':
      return code.replace(/-/g, '_');
    default:
      return code;
  }
}

export class TranslationsService {
  constructor(private readonly deps: TranslationDeps) {}

  private get k() {
    return this.deps.db.kysely;
  }

  private async author(actor: Actor) {
    const u = actor.user!;
    return { userId: u.id, name: u.name, email: u.commit_email || u.email };
  }

  private message(template: string, project: TranslationProjectRow, component: ComponentRow, language: LanguageRow, code: string): string {
    const vars: Record<string, string> = {
      language_name: language.name,
      language_code: code,
      project_name: project.name,
      project_slug: project.slug,
      component_name: component.name,
      component_slug: component.slug,
      component_remote_branch: component.branch,
    };
    return template.replace(/\{\{\s*([a-z_.]+)\s*\}\}/g, (_m, name: string) => vars[name] ?? '');
  }

  /**
   * POST /api/components/:p/:c/translations/ {language_code}: checks in Weblate's order (translation.add
   * → 403 "Can not create translation"; the field; the language; adding turned off → 403; the file), then
   * the commit. Returns the new translation row.
   */
  async add(actor: Actor, project: TranslationProjectRow, component: ComponentRow, languageCode: unknown): Promise<TranslationRow> {
    const perms = this.deps.writes.permissions;
    await perms.require(actor, 'translation.add', { project, component }, 'Can not create translation');
    if (languageCode === undefined || languageCode === null || languageCode === '') throw Errors.invalid({ language_code: ['This field is required.'] });
    if (typeof languageCode !== 'string') throw Errors.invalid({ language_code: ['Not a valid string.'] });
    const language = await this.k.selectFrom('languages').selectAll().where('code', '=', languageCode).executeTakeFirst();
    if (!language) throw Errors.invalid({ language_code: [`No language code "${languageCode}" found!`] });
    if (component.new_lang !== 'add' && !(await perms.can(actor, 'component.edit', { project, component })))
      throw Errors.forbidden('Adding new translations is turned off in the component configuration.');

    const couldNot = Errors.invalid({ language_code: [`Could not add '${languageCode}'!`] });
    const format = getFormat(component.file_format);
    if (!format || !component.head || !component.filemask.includes('*')) throw couldNot;
    const taken = await this.k
      .selectFrom('translations')
      .select('id')
      .where('component_id', '=', component.id)
      .where('language_id', '=', language.id)
      .executeTakeFirst();
    if (taken || language.id === component.source_language_id) throw couldNot;
    const code = styled(language.code, component.language_code_style);
    if (!/^[A-Za-z0-9]+(?:[-_@][A-Za-z0-9]+)*$/.test(code) || code === 'source') throw couldNot;
    if (component.language_regex) {
      let re: RegExp | null = null;
      try {
        re = new RegExp(component.language_regex);
      } catch {
        re = null;
      }
      if (re && !re.test(code)) throw couldNot;
    }
    const path = component.filemask.replaceAll('*', code);
    const repo = this.deps.vcs.mirror(component.id);
    if (await repo.entryAt(component.head, path)) throw couldNot;

    // a bilingual file starts from the template of its strings (Weblate's component check)
    if (!component.new_base && !component.template && format.monolingual !== true)
      throw Errors.forbidden('You have set up Weblate to add new translation files, but did not provide base file to do that.');
    const content = await this.newFile(component, format, language, code);
    if (!content) throw couldNot;
    const template = component.add_message || DEFAULT_ADD_MESSAGE;
    await this.deps.writes.repository.commitFiles(
      component,
      [{ path, content }],
      await this.author(actor),
      this.message(template, project, component, language, code),
    );

    const row = await this.k
      .selectFrom('translations')
      .selectAll()
      .where('component_id', '=', component.id)
      .where('language_id', '=', language.id)
      .executeTakeFirst();
    if (!row) throw couldNot;
    await recordChange(this.k, {
      projectId: project.id,
      componentId: component.id,
      translationId: row.id,
      languageId: language.id,
      userId: actor.user!.id,
      authorId: actor.user!.id,
      action: ACTION.ADDED_LANGUAGE,
      target: language.code,
    });
    return row;
  }

  /** The bytes of a new translation file; null when the format cannot start one. */
  private async newFile(component: ComponentRow, format: FileFormat, language: LanguageRow, code: string): Promise<Buffer | null> {
    let bytes: Buffer;
    if (component.new_base) {
      const repo = this.deps.vcs.mirror(component.id);
      const entry = await repo.entryAt(component.head, component.new_base);
      if (!entry || entry.type !== 'blob') return null;
      bytes = await this.deps.vcs.blob(this.deps.vcs.mirrorDir(component.id), entry.sha);
    } else {
      const empty = EMPTY[format.id];
      if (empty === undefined) return null;
      bytes = Buffer.from(empty, 'utf8');
    }
    if (format.updateHeader) {
      const plural = await this.k
        .selectFrom('language_plurals')
        .select(['number', 'formula'])
        .where('language_id', '=', language.id)
        .where('source', '=', 0)
        .executeTakeFirst();
      const fields: Record<string, string> = { Language: code };
      if (plural) fields['Plural-Forms'] = `nplurals=${plural.number}; plural=${plural.formula};`;
      bytes = format.updateHeader(bytes, fields);
    }
    try {
      format.parse(bytes, { language: code });
    } catch {
      return null;
    }
    return bytes;
  }

  /**
   * DELETE /api/translations/:p/:c/:lang/: translation.delete (403 "Can not delete translation"; the
   * source translation is never removed), then a commit removing the file; the rescan drops the rows.
   */
  async remove(actor: Actor, project: TranslationProjectRow, component: ComponentRow, translation: TranslationRow): Promise<void> {
    await this.deps.writes.permissions.require(actor, 'translation.delete', { project, component, translation }, 'Can not delete translation');
    if (translation.is_source || translation.is_template || !translation.filename) throw Errors.forbidden('Can not delete translation');
    const language = await this.k.selectFrom('languages').selectAll().where('id', '=', translation.language_id).executeTakeFirstOrThrow();
    const template = component.delete_message || DEFAULT_DELETE_MESSAGE;
    await this.deps.writes.repository.commitFiles(
      component,
      [{ path: translation.filename, content: null }],
      await this.author(actor),
      this.message(template, project, component, language, translation.language_code),
    );
  }
}
