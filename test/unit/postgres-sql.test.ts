import { describe, expect, it } from 'vitest';
import { describeStore, isPostgresUrl } from '../../src/store/open-store.ts';
import { parseInteger, toPositional } from '../../src/store/postgres-sql.ts';

describe('toPositional: the Store port speaks ?, PostgreSQL speaks $n', () => {
  it('numbers the placeholders from left to right', () => {
    expect(toPositional('SELECT * FROM t WHERE a = ? AND b IN (?, ?) LIMIT ?')).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3) LIMIT $4',
      count: 4,
    });
  });

  it('leaves a ? inside a string literal, a quoted identifier or a comment alone', () => {
    const sql = `SELECT '?', 'it''s ?', "odd?name" FROM t -- why?\nWHERE a = ? /* and ? here */ AND b = ?`;
    expect(toPositional(sql)).toEqual({
      text: `SELECT '?', 'it''s ?', "odd?name" FROM t -- why?\nWHERE a = $1 /* and ? here */ AND b = $2`,
      count: 2,
    });
  });

  it('resumes numbering after a literal that contains escaped quotes', () => {
    expect(toPositional("UPDATE t SET note = 'a '' ? b', v = ? WHERE id = ?").text).toBe("UPDATE t SET note = 'a '' ? b', v = $1 WHERE id = $2");
  });

  it('types a placeholder that is only tested for NULL (PostgreSQL could not infer its type)', () => {
    expect(toPositional('SELECT seq FROM t WHERE (? IS NULL OR kind = ?) AND (? is not null)').text).toBe(
      'SELECT seq FROM t WHERE ($1::text IS NULL OR kind = $2) AND ($3::text is not null)',
    );
  });

  it('leaves SQL without placeholders as it is', () => {
    expect(toPositional("SELECT value FROM runtime_state WHERE name = 'boot'")).toEqual({ text: "SELECT value FROM runtime_state WHERE name = 'boot'", count: 0 });
  });
});

describe('parseInteger: BIGINT and NUMERIC read as SQLite reads them', () => {
  it('reads safe integers as numbers', () => {
    expect(parseInteger('0')).toBe(0);
    expect(parseInteger('-42')).toBe(-42);
    expect(parseInteger(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseInteger(String(-Number.MAX_SAFE_INTEGER))).toBe(-Number.MAX_SAFE_INTEGER);
  });

  it('reads an integer beyond the safe range as an exact bigint, never a rounded number', () => {
    expect(parseInteger('9007199254740993')).toBe(9007199254740993n);
  });

  it('reads a fractional NUMERIC as a number, as SQLite answers a REAL', () => {
    expect(parseInteger('2.5000000000000000')).toBe(2.5);
  });
});

describe('store selection', () => {
  it('takes postgres:// and postgresql:// URLs for PostgreSQL and anything else for a SQLite path', () => {
    expect(isPostgresUrl('postgres://u@db/railyard')).toBe(true);
    expect(isPostgresUrl('postgresql://u:p@db:5432/railyard')).toBe(true);
    expect(isPostgresUrl('./data/railyard.db')).toBe(false);
    expect(isPostgresUrl(':memory:')).toBe(false);
  });

  it('never shows a URL password', () => {
    expect(describeStore('postgres://railyard:s3cret@db:5432/railyard')).toBe('PostgreSQL postgres://railyard:***@db:5432/railyard');
    expect(describeStore('./data/railyard.db')).toBe('./data/railyard.db');
  });
});
