import { escapeHtml } from '../kernel/escape-html.ts';

// An escaping tagged template: every interpolated value is HTML-escaped unless it is already
// Html (another template's output), so user data never reaches a page unescaped.

export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup the code itself wrote (never user data). */
export function trusted(text: string): Html {
  return new Html(text);
}

/** A URL path with query parameters, each encoded: for href and action attributes. */
export function href(path: string, query: Record<string, string | number | null | undefined> = {}): string {
  const params = Object.entries(query).filter((e): e is [string, string | number] => e[1] !== undefined && e[1] !== null && e[1] !== '');
  if (!params.length) return path;
  return `${path}?${params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}`;
}
