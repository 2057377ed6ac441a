import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CHECK_IDS,
  CHECK_NAMES,
  baseCode,
  enforcedFailures,
  parseEnforcedChecks,
  runChecks,
  type RunChecksInput,
} from '../../../src/domain/translation/checks/index.ts';
import { mergeFlags, parseFlagItems, parseFlags } from '../../../src/domain/translation/checks/flags.ts';
import { pairForms, pluralExamples } from '../../../src/domain/translation/checks/plurals.ts';

const CS = '(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2';

type Over = Partial<Omit<RunChecksInput, 'flags'>> & { flags?: Set<string> | string };

function run(over: Over = {}): string[] {
  const flags = typeof over.flags === 'string' ? parseFlags(over.flags) : (over.flags ?? new Set<string>());
  return runChecks({
    sources: ['Hello world.'],
    targets: ['Hallo Welt.'],
    state: 20,
    sourceLanguage: 'en',
    targetLanguage: 'de',
    pluralCount: 2,
    isSource: false,
    ...over,
    flags,
  });
}

test('ids and names are Weblate’s', () => {
  for (const id of [
    'same',
    'c_format',
    'python_format',
    'python_brace_format',
    'begin_space',
    'end_space',
    'end_stop',
    'end_colon',
    'end_question',
    'end_exclamation',
    'plurals',
    'double_space',
  ]) {
    assert.ok(CHECK_IDS.includes(id), id);
  }
  assert.deepEqual([...CHECK_IDS], [...CHECK_IDS].sort());
  assert.equal(CHECK_NAMES.same, 'Unchanged translation');
  assert.equal(CHECK_NAMES.end_stop, 'Mismatched full stop');
  assert.equal(CHECK_NAMES.end_colon, 'Mismatched colon');
  assert.equal(CHECK_NAMES.end_question, 'Mismatched question mark');
  assert.equal(CHECK_NAMES.end_exclamation, 'Mismatched exclamation mark');
  assert.equal(CHECK_NAMES.begin_space, 'Starting spaces');
  assert.equal(CHECK_NAMES.end_space, 'Trailing space');
  assert.equal(CHECK_NAMES.double_space, 'Double space');
  assert.equal(CHECK_NAMES.plurals, 'Missing plurals');
  assert.equal(CHECK_NAMES.c_format, 'C format');
  assert.equal(CHECK_NAMES.python_format, 'Python format');
  assert.equal(CHECK_NAMES.python_brace_format, 'Python brace format');
});

test('which units are checked: not empty, read-only or source units; fuzzy ones are', () => {
  const same = { sources: ['Hello world'], targets: ['Hello world'] };
  assert.deepEqual(run(), []);
  assert.deepEqual(run(same), ['same']);
  assert.deepEqual(run({ ...same, state: 10 }), ['same']);
  assert.deepEqual(run({ ...same, state: 30 }), ['same']);
  assert.deepEqual(run({ ...same, state: 0 }), []);
  assert.deepEqual(run({ ...same, state: 100 }), []);
  assert.deepEqual(run({ ...same, isSource: true }), []);
  assert.deepEqual(run({ ...same, flags: 'ignore-same' }), []);
  assert.deepEqual(run({ ...same, flags: 'ignore-all-checks' }), []);
});

test('same: Weblate’s exceptions', () => {
  const same = (text: string, over: Over = {}) => run({ sources: [text], targets: [text], ...over });
  assert.deepEqual(same('Hello world', { targetLanguage: 'en_GB' }), []); // English variant of an English source
  assert.deepEqual(same('Hello world', { targetLanguage: 'ia' }), []);
  assert.deepEqual(same('Hallo Welt', { sourceLanguage: 'de', targetLanguage: 'de_AT' }), []);
  assert.deepEqual(same('A'), []); // one letter
  assert.deepEqual(same('1:4'), []);
  assert.deepEqual(same('3.14'), []);
  assert.deepEqual(same('© 2020 ACME Corporation'), []);
  assert.deepEqual(same('OK'), []); // abbreviation
  assert.deepEqual(same('Linux'), []); // usually untranslated
  assert.deepEqual(same('German'), []); // a language name
  assert.deepEqual(same('john@example.com'), []);
  assert.deepEqual(same('https://weblate.org/'), []);
  assert.deepEqual(same('<b>Hi</b> to'), []); // markup and short words only
  assert.deepEqual(same('%s: %d', { flags: 'c-format' }), []);
  assert.deepEqual(same('Hearth Forge', { projectName: 'Hearth', componentName: 'Forge' }), []);
  assert.deepEqual(same('Program listing', { note: 'Tag: programlisting' }), []);
  assert.deepEqual(same('OK', { flags: 'strict-same' }), ['same']);
  assert.deepEqual(same('Unknown setting'), ['same']);
});

test('whitespace checks', () => {
  assert.deepEqual(run({ sources: [' Hello world.'], targets: ['Hallo Welt.'] }), ['begin_space']);
  assert.deepEqual(run({ sources: ['  Hello world.'], targets: [' Hallo Welt.'] }), ['begin_space']);
  assert.deepEqual(run({ sources: ['Hello world '], targets: ['Hallo Welt'] }), ['end_space']);
  assert.deepEqual(run({ sources: [','], targets: [' '] }), []); // one-letter strings
  assert.deepEqual(run({ sources: ['Hello world.'], targets: ['Hallo  Welt.'] }), ['double_space']);
  assert.deepEqual(run({ sources: ['Hello  world.'], targets: ['Hallo  Welt.'] }), []);
  assert.deepEqual(run({ sources: ['Hello world\n'], targets: ['Hallo Welt'] }), ['end_newline', 'newline-count']);
  assert.deepEqual(run({ sources: ['Hello world.\n'], targets: ['Hallo Welt.'] }), ['end_newline', 'end_stop', 'newline-count']);
});

test('terminal punctuation, with Weblate’s language rules', () => {
  assert.deepEqual(run({ sources: ['Hello world.'], targets: ['Hallo Welt'] }), ['end_stop']);
  assert.deepEqual(run({ sources: ['Hello world'], targets: ['Hallo Welt.'] }), ['end_stop']);
  assert.deepEqual(run({ sources: ['Hi.'], targets: ['Hallo'] }), []); // short: might be an abbreviation
  assert.deepEqual(run({ sources: ['Loading...'], targets: ['Laden…'] }), []);
  assert.deepEqual(run({ sources: ['Hello world.'], targets: ['こんにちは世界。'], targetLanguage: 'ja' }), []);
  assert.deepEqual(run({ sources: ['Hello world.'], targets: ['สวัสดีชาวโลก'], targetLanguage: 'th' }), []);
  assert.deepEqual(run({ sources: ['Name:'], targets: ['Name'] }), ['end_colon']);
  assert.deepEqual(run({ sources: ['Note:'], targets: ['注意。'], targetLanguage: 'ja' }), []);
  assert.deepEqual(run({ sources: ['Really?'], targets: ['Wirklich'] }), ['end_question']);
  assert.deepEqual(run({ sources: ['Really?'], targets: ['Αλήθεια;'], targetLanguage: 'el' }), []);
  assert.deepEqual(run({ sources: ['Really?'], targets: ['Αλήθεια'], targetLanguage: 'el' }), ['end_question']);
  assert.deepEqual(run({ sources: ['Really?!'], targets: ['Wirklich'] }), ['end_interrobang']);
  assert.deepEqual(run({ sources: ['Done!'], targets: ['Fertig'] }), ['end_exclamation']);
  assert.deepEqual(run({ sources: ['Done!'], targets: ['Պատրաստ։'], targetLanguage: 'hy' }), []); // no exclamation check; "!" ends a sentence
  assert.deepEqual(run({ sources: ['Done!'], targets: ['Fertig'], flags: 'ignore-end-exclamation' }), []);
});

test('format checks run only with their flag', () => {
  const c = (source: string, target: string, flags = 'c-format') => run({ sources: [source], targets: [target], flags });
  assert.deepEqual(c('%d files.', '%s Dateien.', ''), []);
  assert.deepEqual(c('%d files.', '%s Dateien.'), ['c_format']);
  assert.deepEqual(c('%d files.', 'Dateien.'), ['c_format']);
  assert.deepEqual(c('%s of %d.', '%d von %s.'), ['c_format']); // positional: order matters
  assert.deepEqual(c('%1$s of %2$d.', '%2$d von %1$s.'), []); // numbered: reordering is fine
  assert.deepEqual(c('100%% of %s.', '100%% von %s.'), []);
  assert.deepEqual(c("%'d items.", '%d Elemente.'), []); // locale flag ignored
  assert.deepEqual(c('%d files.', '%s Dateien.', 'c-format, ignore-c-format'), []);
  const py = (source: string, target: string) => run({ sources: [source], targets: [target], flags: 'python-format' });
  assert.deepEqual(py('%(count)d items.', '%(count)d Elemente.'), []);
  assert.deepEqual(py('%(count)d items.', '%(num)d Elemente.'), ['python_format']);
  const brace = (source: string, target: string) => run({ sources: [source], targets: [target], flags: 'python-brace-format' });
  assert.deepEqual(brace('{name} has {count}.', '{count} hat {name}.'), []);
  assert.deepEqual(brace('{name} has {count}.', '{name} hat {anzahl}.'), ['python_brace_format']);
  assert.deepEqual(brace('{0} files.', '{0} Dateien }.'), ['python_brace_format']); // single brace
  assert.deepEqual(brace('{{literal}} {x}.', '{{wörtlich}} {x}.'), []);
  assert.deepEqual(brace('{} and {}.', '{} und {}.'), []);
});

test('plural forms: missing forms, and format strings per form', () => {
  const sources = ['%d file', '%d files'];
  assert.deepEqual(run({ sources, targets: ['%d Datei', ''] }), ['plurals']);
  assert.deepEqual(run({ sources, targets: ['%d Datei'] }), ['plurals']); // padded to the plural count
  assert.deepEqual(run({ sources, targets: ['%d Datei', '%d Dateien'] }), []);
  assert.deepEqual(run({ sources, targets: ['Datei', 'Datei'] }), ['same-plurals']);
  // the singular may leave the count out when its form is used for one number only
  assert.deepEqual(run({ sources: ['One file', '%d files'], targets: ['Eine Datei', '%d Dateien'], flags: 'c-format' }), []);
  assert.deepEqual(run({ sources: ['One file', '%d files'], targets: ['Eine Datei', 'Dateien'], flags: 'c-format' }), ['c_format']);
  assert.deepEqual(run({ sources: ['One file', '%d files'], targets: ['Eine Datei', '%d Dateien'], flags: 'c-format, strict-format' }), ['c_format']);
  const cs = { sources: ['One file', '%d files'], targetLanguage: 'cs', pluralCount: 3, pluralFormula: CS, flags: 'c-format' };
  assert.deepEqual(run({ ...cs, targets: ['Jeden soubor', '%d soubory', '%d souborů'] }), []);
  assert.deepEqual(run({ ...cs, targets: ['Jeden soubor', '%d soubory', 'souborů'] }), ['c_format']);
  // the Czech "few" and "many" forms are checked against the English plural
  assert.deepEqual(run({ sources: ['File', 'Files'], targets: ['Soubor', 'Soubory', 'Files'], targetLanguage: 'cs', pluralCount: 3, pluralFormula: CS }), [
    'same',
  ]);
});

test('PluralMapper pairing and plural examples', () => {
  const en = { number: 2, formula: 'n != 1' };
  const cs = { number: 3, formula: CS };
  assert.deepEqual(pluralExamples('n != 1')!.get(0), ['1']);
  assert.deepEqual(pluralExamples(CS)!.get(1), ['2', '3', '4']);
  assert.deepEqual(pairForms(['one', 'other'], ['a', 'b', 'c'], en, cs), [
    ['one', 'a'],
    ['other', 'b'],
    ['other', 'c'],
  ]);
  assert.deepEqual(pairForms(['one', 'other'], ['a'], en, { number: 1, formula: '0' }), [['other', 'a']]);
  assert.deepEqual(pairForms(['s'], ['t'], en, cs), [['s', 't']]);
});

test('language base codes', () => {
  assert.equal(baseCode('pt_BR'), 'pt');
  assert.equal(baseCode('zh-Hant'), 'zh');
  assert.equal(baseCode('sr@latin'), 'sr');
});

test('parseFlags: Weblate’s flag syntax', () => {
  assert.deepEqual([...parseFlags('')], []);
  assert.deepEqual([...parseFlags('c-format, max-length:100')], ['c-format', 'max-length']);
  assert.deepEqual([...parseFlags(' ,, fuzzy, python-format ,')], ['python-format']);
  assert.deepEqual([...parseFlags('markdown-text')], ['md-text']);
  assert.deepEqual(
    [...parseFlagItems(`font-family:"Noto Sans", placeholders:r"\\{[a-z]+\\}":'%s', replacements:a:b, ignore-same, x:`)],
    [
      ['font-family', ['Noto Sans']],
      ['placeholders', ['\\{[a-z]+\\}', '%s']],
      ['replacements', ['a', 'b']],
      ['ignore-same', null],
      ['x', ['']],
    ],
  );
  assert.deepEqual([...parseFlagItems('a:"say \\"hi\\"\\n"')], [['a', ['say "hi"\n']]]);
  assert.throws(() => parseFlags('a:"unterminated'), /^Error: Could not parse flags: unterminated quoted string at char 2$/);
  assert.throws(() => parseFlags('a b"c'), /Could not parse flags/);
  assert.deepEqual([...mergeFlags('c-format', null, 'ignore-same, c-format')], ['c-format', 'ignore-same']);
});

test('parseEnforcedChecks', () => {
  assert.deepEqual(parseEnforcedChecks('["same"]'), ['same']);
  assert.deepEqual(parseEnforcedChecks('["same", "c_format", "same"]'), ['same', 'c_format']);
  assert.deepEqual(parseEnforcedChecks(''), []);
  assert.deepEqual(parseEnforcedChecks('[]'), []);
  assert.throws(() => parseEnforcedChecks('"same"'), { message: 'Enforced checks has to be a list.' });
  assert.throws(() => parseEnforcedChecks('same'), { message: 'Enforced checks has to be a list.' });
  assert.throws(() => parseEnforcedChecks('["bogus"]'), { message: 'Unsupported enforced check: bogus' });
  assert.throws(() => parseEnforcedChecks('[1]'), { message: 'Unsupported enforced check: 1' });
  assert.deepEqual(enforcedFailures(['end_stop', 'same'], ['same']), ['same']);
});
