import { createHash } from 'node:crypto';
import type { Db } from '../../src/store/db.ts';

/**
 * Rows a refused request may still write, each with why; every other row of every table
 * (sqlite_sequence included: a refused request's transaction rolls its AUTOINCREMENT counters
 * back too) must stay byte-identical across a 4xx.
 */
export const DIGEST_EXCLUSIONS: Readonly<Record<string, { where: string; reason: string }>> = {
  rail_attempts: {
    where: "ref_type = 'name_enquiry'",
    reason:
      'A name enquiry moves nothing but really calls a provider, and the router logs every upstream call whatever it answers: ' +
      'a 404 enquiry is the provider saying "no such account", logged as the request log line is.',
  },
  sqlite_sequence: { where: "name = 'rail_attempts'", reason: 'the AUTOINCREMENT counter those log rows advance' },
};

/**
 * A digest of every row of every table (row count and SHA-256 of the rows in rowid order),
 * for FuzzOptions.digest. SQLite spells each row out itself (quote() of every column), so a
 * digest costs one query per table; and its change counters (total_changes() for this
 * connection, data_version for the others) say when nothing was written since the last digest,
 * which then stands: most refused requests cost two cheap queries, not a scan.
 */
export function storeDigest(db: Pick<Db, 'all' | 'get'>, exclusions: Readonly<Record<string, { where: string }>> = DIGEST_EXCLUSIONS): () => Promise<string> {
  let last: { marker: string; digest: string } | undefined;
  const rowText = new Map<string, string>();
  const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
  return async () => {
    const changes = await db.get<{ n: number }>('SELECT total_changes() AS n');
    const version = await db.get<{ data_version: number }>('PRAGMA data_version');
    const marker = `${changes?.n}:${version?.data_version}`;
    if (last?.marker === marker) return last.digest;
    const tables = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    const lines: string[] = [];
    for (const { name } of tables) {
      let row = rowText.get(name);
      if (!row) {
        const columns = await db.all<{ name: string }>(`PRAGMA table_info(${ident(name)})`);
        row = columns.map((c) => `quote(${ident(c.name)})`).join(" || ',' || ");
        rowText.set(name, row);
      }
      const skip = Object.hasOwn(exclusions, name) ? ` WHERE NOT (${exclusions[name]!.where})` : '';
      const all = await db.get<{ n: number; rows: string | null }>(`SELECT count(*) AS n, group_concat(${row}, char(10) ORDER BY rowid) AS rows FROM ${ident(name)}${skip}`);
      lines.push(
        `${name}: ${all?.n ?? 0} rows, ${createHash('sha256')
          .update(all?.rows ?? '')
          .digest('hex')
          .slice(0, 16)}`,
      );
    }
    last = { marker, digest: lines.join('\n') };
    return last.digest;
  };
}
