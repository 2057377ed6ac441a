// The units search language `q`: parseQuery(q) → QueryNode, compileQuery(node, dialect) → where().
export { parseQuery, QueryParseError, STATE_NAMES } from './parser.ts';
export type { QueryNode, TextColumn, NumberColumn, FlagColumn, TimeColumn, CompareOp } from './parser.ts';
export { compileQuery, likeEscape, usesRegex } from './compile.ts';
export type { SearchDialect } from './compile.ts';
