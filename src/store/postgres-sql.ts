// SQL text helpers for the PostgreSQL adapter: the Store port speaks SQLite's positional `?`.

const translated = new Map<string, { text: string; count: number }>();

/**
 * Rewrites each positional `?` placeholder to PostgreSQL's `$1..$n`, left to right. A `?` inside a
 * string literal ('…', with '' as an escaped quote), a quoted identifier ("…") or a comment
 * (-- to the end of the line, or /* … *\/) is text, not a placeholder, and stays as it is.
 * A placeholder tested with IS [NOT] NULL is cast to text, the one place PostgreSQL cannot infer its type.
 */
export function toPositional(sql: string): { text: string; count: number } {
  const cached = translated.get(sql);
  if (cached) return cached;
  let out = '';
  let count = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql[i]!;
    if (ch === "'" || ch === '"') {
      // A quoted run ends at the next lone quote of the same kind; a doubled one is an escape.
      let j = i + 1;
      for (;;) {
        const k = sql.indexOf(ch, j);
        if (k < 0) {
          j = sql.length;
          break;
        }
        if (sql[k + 1] === ch) {
          j = k + 2;
          continue;
        }
        j = k + 1;
        break;
      }
      out += sql.slice(i, j);
      i = j;
    } else if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end < 0 ? sql.length : end;
      out += sql.slice(i, j);
      i = j;
    } else if (ch === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const j = end < 0 ? sql.length : end + 2;
      out += sql.slice(i, j);
      i = j;
    } else if (ch === '?') {
      // `? IS NULL` gives PostgreSQL no type to infer for the parameter: only its nullness counts,
      // so text will do (each ? is its own $n, so no other use of the value changes).
      out += /^\s*IS\s+(NOT\s+)?NULL\b/i.test(sql.slice(i + 1, i + 40)) ? `$${++count}::text` : `$${++count}`;
      i++;
    } else {
      out += ch;
      i++;
    }
  }
  const result = { text: out, count };
  if (translated.size >= 1_000) translated.clear(); // bounded, should SQL ever be built per call
  translated.set(sql, result);
  return result;
}

/**
 * PostgreSQL's BIGINT, NUMERIC (what SUM of a BIGINT gives) and COUNT arrive as text: read them as
 * JS numbers, as node:sqlite gives them, so callers see the same types on both backends. An
 * integer beyond Number.MAX_SAFE_INTEGER is a bigint rather than a silently rounded number.
 */
export function parseInteger(text: string): number | bigint {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return Number(text); // a fractional NUMERIC (an AVG, say): SQLite would answer a REAL
}
