// File.fnmatch as GitLab's `rules:changes` and `rules:exists` use it (FNM_PATHNAME | FNM_DOTMATCH |
// FNM_EXTGLOB): `*` and `?` stay inside a directory, `**/` spans directories, `{a,b}` alternatives,
// `[...]` classes.
export function globRegExp(pattern: string): RegExp {
  const p = pattern.replace(/^\/+/, '');
  let re = '';
  let braces = 0;
  for (let i = 0; i < p.length; i++) {
    const ch = p[i];
    if (ch === '*') {
      if (p[i + 1] === '*' && (i === 0 || p[i - 1] === '/') && p[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else if (p[i + 1] === '*' && (i === 0 || p[i - 1] === '/') && i + 2 === p.length) {
        re += '.*';
        i += 1;
      } else re += '[^/]*';
    } else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const close = p.indexOf(']', i + 1);
      if (close < 0) re += '\\[';
      else {
        let cls = p.slice(i + 1, close);
        if (cls.startsWith('!')) cls = `^${cls.slice(1)}`;
        re += `[${cls.replace(/\\/g, '\\\\')}]`;
        i = close;
      }
    } else if (ch === '{') {
      braces++;
      re += '(?:';
    } else if (ch === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (ch === ',' && braces > 0) re += '|';
    else re += ch.replace(/[.+^$()|\\]/g, '\\$&');
  }
  if (braces > 0) return /(?!)/;
  return new RegExp(`^${re}$`);
}

/** Whether any of `files` matches any of `patterns`. */
export function anyMatch(patterns: string[], files: string[]): boolean {
  const res = patterns.map(globRegExp);
  return files.some((f) => res.some((r) => r.test(f)));
}
