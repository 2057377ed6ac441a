// Reading posted forms (qs-parsed urlencoded bodies) and turning domain errors into form messages.
import { DomainError } from '../../../lib/errors.ts';
import { formErrorsOf } from '../components.tsx';

export function bodyOf(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A text field: the last value when the field came several times, '' when absent. */
export function str(v: unknown): string {
  if (Array.isArray(v)) return str(v[v.length - 1]);
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}

/** A checkbox (after its hidden "0"): checked when the last value is 1/true/on. */
export function flag(v: unknown): boolean {
  return ['1', 'true', 'on'].includes(str(v));
}

/** Checkboxes of one name (`scopes[]`): the strings sent. */
export function list(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string');
  if (typeof v === 'string') return [v];
  if (v && typeof v === 'object') return Object.values(v).filter((x): x is string => typeof x === 'string');
  return [];
}

/** A client mistake as form messages (null: not a form problem — 404s, 500s — the error page shows it). */
export function errorsOf(e: unknown): string[] | null {
  if (e instanceof DomainError && e.status < 500 && e.status !== 404 && e.status !== 401) {
    if (Array.isArray(e.detail)) return e.detail.map(String);
    if (e.detail && typeof e.detail === 'object' && 'message' in e.detail) {
      const m = (e.detail as { message: unknown }).message;
      if (typeof m === 'string') return [m];
      if (m && typeof m === 'object') return formErrorsOf(new DomainError('invalid', 400, m));
    }
    // the API's `{"error": "…"}` bodies (a refused hook URL, an invalid header): their text
    if (e.detail && typeof e.detail === 'object' && 'error' in e.detail) {
      const m = (e.detail as { error: unknown }).error;
      if (typeof m === 'string') return [m];
      if (Array.isArray(m)) return m.map(String);
    }
  }
  return formErrorsOf(e);
}
