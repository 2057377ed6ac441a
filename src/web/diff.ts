// Diffs as HTML: the FileDiff collection of src/git/diff.ts rendered by diff2html on the server.
// diff2html escapes file names and content itself; its output goes in through raw() as trusted markup.
// Files the collection pruned (collapsed past the safe limits, too large) keep their header and
// carry a fixed notice instead of hunks, so a reader sees the file changed and why it is not shown.
import { html, parse } from 'diff2html';
import type { DiffFile } from 'diff2html/lib/types.js';
import type { FileDiff } from '../git/diff.ts';
import { raw, type SafeHtml } from './jsx/jsx-runtime.ts';

export interface RenderDiffOptions {
  viewType?: 'inline' | 'parallel';
  /** draw the list of changed files above the diffs (default true) */
  fileList?: boolean;
}

const NOTICE_TOO_LARGE = 'Changes too large to be displayed.';
const NOTICE_COLLAPSED = 'Changes collapsed: this diff is over the display limits.';

/** The git-style text of one file diff, with the `diff --git` header diff2html wants. */
export function fileDiffText(d: FileDiff): string {
  const mode = (m: string) => m.padStart(6, '0');
  const lines = [`diff --git a/${d.oldPath} b/${d.newPath}`];
  if (d.newFile) lines.push(`new file mode ${mode(d.bMode)}`);
  else if (d.deletedFile) lines.push(`deleted file mode ${mode(d.aMode)}`);
  else if (d.aMode !== d.bMode) lines.push(`old mode ${mode(d.aMode)}`, `new mode ${mode(d.bMode)}`);
  if (d.renamedFile) lines.push(`rename from ${d.oldPath}`, `rename to ${d.newPath}`);
  const binary = /^Binary files .* and .* differ/.test(d.patch);
  if (binary) {
    lines.push(d.patch.replace(/\n$/, ''));
  } else if (d.patch !== '') {
    lines.push(`--- ${d.newFile ? '/dev/null' : `a/${d.oldPath}`}`, `+++ ${d.deletedFile ? '/dev/null' : `b/${d.newPath}`}`);
    lines.push(d.patch.replace(/\n$/, ''));
  }
  return `${lines.join('\n')}\n`;
}

/** diff2html's model of the files, one parse per file so names with spaces or odd headers stay right. */
function toDiff2Html(files: FileDiff[]): DiffFile[] {
  const out: DiffFile[] = [];
  for (const d of files) {
    const parsed = parse(fileDiffText(d), { matching: 'none' })[0];
    const f: DiffFile = parsed ?? {
      oldName: d.oldPath,
      newName: d.newPath,
      addedLines: 0,
      deletedLines: 0,
      isCombined: false,
      isGitDiff: true,
      language: '',
      blocks: [],
    };
    // the names from the collection, not from header parsing
    f.oldName = d.newFile ? '/dev/null' : d.oldPath;
    f.newName = d.deletedFile ? '/dev/null' : d.newPath;
    if (d.tooLarge || d.collapsed) {
      f.isTooBig = true;
      f.blocks = [{ oldStartLine: 0, newStartLine: 0, header: d.tooLarge ? NOTICE_TOO_LARGE : NOTICE_COLLAPSED, lines: [] }];
    }
    out.push(f);
  }
  return out;
}

/** The diff of a collection of files as HTML (diff2html's markup and CSS classes). */
export function renderDiff(files: FileDiff[], opts: RenderDiffOptions = {}): SafeHtml {
  if (files.length === 0) return raw('<p class="color-fg-muted">No changes.</p>');
  const out = html(toDiff2Html(files), {
    outputFormat: opts.viewType === 'parallel' ? 'side-by-side' : 'line-by-line',
    matching: 'none',
    drawFileList: opts.fileList ?? true,
  });
  // the hide/show switches of the file list need diff2html-ui's script: without it they are dead links
  return raw(out.replace(/\s*<a class="d2h-file-switch d2h-(?:hide|show)">(?:hide|show)<\/a>/g, ''));
}
