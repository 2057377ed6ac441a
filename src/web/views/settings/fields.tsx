// Labelled form fields of the settings and admin forms (every control has a visible <label for>).
import type { SafeHtml } from '../../jsx/jsx-runtime.ts';

export interface FieldProps {
  id: string;
  name: string;
  label: string;
  value?: string | number | null;
  type?: string;
  required?: boolean;
  hint?: string;
  placeholder?: string;
  autocomplete?: string;
  min?: string | number;
  max?: string | number;
  maxlength?: number;
  /** the field's messages, under it (the input is marked invalid and described by them) */
  errors?: string[];
  /** a monospaced value (keys, tokens) */
  mono?: boolean;
}

export function Field(p: FieldProps): SafeHtml {
  const hintId = p.hint ? `${p.id}_hint` : undefined;
  const invalid = !!p.errors?.length;
  const described = [hintId, invalid ? `${p.id}_error` : undefined].filter(Boolean).join(' ') || undefined;
  return (
    <div class="FormControl mb-3">
      <label class="FormControl-label" for={p.id}>
        {p.label}
      </label>
      <input
        class={`form-control width-full${p.mono ? ' text-mono' : ''}`}
        id={p.id}
        name={p.name}
        type={p.type ?? 'text'}
        value={p.value ?? ''}
        required={p.required}
        placeholder={p.placeholder}
        autocomplete={p.autocomplete}
        min={p.min}
        max={p.max}
        maxlength={p.maxlength}
        aria-invalid={invalid ? 'true' : undefined}
        aria-describedby={described}
      />
      {p.hint ? (
        <p class="note" id={hintId}>
          {p.hint}
        </p>
      ) : null}
      <ErrorsOf id={p.id} errors={p.errors} />
    </div>
  );
}

export function TextArea(p: { id: string; name: string; label: string; value?: string | null; hint?: string; rows?: number }): SafeHtml {
  const hintId = p.hint ? `${p.id}_hint` : undefined;
  return (
    <div class="FormControl mb-3">
      <label class="FormControl-label" for={p.id}>
        {p.label}
      </label>
      <textarea class="form-control width-full" id={p.id} name={p.name} rows={p.rows ?? 4} aria-describedby={hintId}>
        {p.value ?? ''}
      </textarea>
      {p.hint ? (
        <p class="note" id={hintId}>
          {p.hint}
        </p>
      ) : null}
    </div>
  );
}

export function Select(p: {
  id: string;
  name: string;
  label: string;
  value: string;
  /** a disabled option is shown greyed out and cannot be chosen */
  options: { value: string; text: string; disabled?: boolean }[];
  hint?: string;
}): SafeHtml {
  return (
    <div class="FormControl mb-3">
      <label class="FormControl-label" for={p.id}>
        {p.label}
      </label>
      <select class="form-select" id={p.id} name={p.name}>
        {p.options.map((o) => (
          <option value={o.value} selected={o.value === p.value} disabled={o.disabled === true}>
            {o.text}
          </option>
        ))}
      </select>
      {p.hint ? <p class="note">{p.hint}</p> : null}
    </div>
  );
}

export function Checkbox(p: { id: string; name: string; label: string; checked: boolean; hint?: string }): SafeHtml {
  return (
    <div class="form-checkbox my-2">
      {/* unchecked boxes send nothing: the hidden 0 comes first, a checked box's 1 wins (qs keeps the last) */}
      <input type="hidden" name={p.name} value="0" />
      <label for={p.id}>
        <input type="checkbox" id={p.id} name={p.name} value="1" checked={p.checked} /> {p.label}
      </label>
      {p.hint ? <p class="note">{p.hint}</p> : null}
    </div>
  );
}

/** Messages of a form per field (`base` for the form as a whole), as the services' `invalid` errors give them. */
export type FieldErrors = Record<string, string[]>;

/** A field's messages under it, the element its control names in aria-describedby. */
export function ErrorsOf(p: { id: string; errors?: string[] }): SafeHtml | null {
  if (!p.errors?.length) return null;
  return (
    <p class="note color-fg-danger" id={`${p.id}_error`}>
      {p.errors.join('; ')}
    </p>
  );
}

/**
 * Every message of a form as one list above it, each naming its field ("Key can contain only …"; `labels` gives a
 * field's name where its key is not it, `base` messages stand alone).
 */
export function fieldSummary(errors: FieldErrors, labels: Record<string, string> = {}): string[] {
  const out: string[] = [];
  for (const [field, msgs] of Object.entries(errors)) {
    const name = labels[field] ?? `${field.charAt(0).toUpperCase()}${field.slice(1).replace(/_/g, ' ')}`;
    for (const m of msgs) out.push(field === 'base' ? m : `${name} ${m}`);
  }
  return out;
}
