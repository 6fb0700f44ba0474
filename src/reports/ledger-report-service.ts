import type { AuthContext } from '../auth/api-key-service.ts';
import { DEFAULT_PAGE_SIZE } from '../http/pagination.ts';
import { iso, type Clock } from '../kernel/clock.ts';
import { NotFoundError } from '../kernel/errors.ts';
import { toMajorString } from '../kernel/money.ts';
import { accounts } from '../ledger/accounts.ts';
import { activeDays, balancesBefore, DAY_MS, ledgerEntries, type LedgerEntryRow } from '../ledger/ledger-entries.ts';
import type { Db, Store } from '../store/db.ts';
import { decodeCursor, keysetPage } from '../store/repositories/keyset-page.ts';
import type { LedgerEntry, Settlement, SettlementLine, SettlementSummary } from './ledger.schemas.ts';

const SETTLEMENT_ID = /^stl_(\d{4})(\d{2})(\d{2})$/;

/** stl_YYYYMMDD of the UTC day an instant falls in. */
export function settlementIdOf(epochMs: number): string {
  return `stl_${new Date(epochMs).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** The UTC day number a settlement id names, or undefined for anything else. */
function dayOf(settlementId: string): number | undefined {
  const match = SETTLEMENT_ID.exec(settlementId);
  if (!match) return undefined;
  const start = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  // Date.UTC rolls 20261131 over to December: only a real calendar day names a report.
  return settlementIdOf(start) === settlementId ? start / DAY_MS : undefined;
}

/** A journal's object as entries name it: a sandbox funding (about the merchant) is its own object. */
function objectOf(row: Pick<LedgerEntryRow, 'ref_type' | 'ref_id' | 'journal_id'>): { type: string; id: string } {
  return row.ref_type === 'merchant' ? { type: 'wallet_funding', id: row.journal_id } : { type: row.ref_type, id: row.ref_id };
}

/**
 * GET /v1/ledger/entries and the daily settlement reports: both read the ledger's postings, the
 * truth every balance derives from, so a report reconciles to the entries it lists.
 */
export class LedgerReportService {
  constructor(private readonly deps: { clock: Clock; store: Store }) {}

  async entries(
    auth: AuthContext,
    query: { cursor?: string; page_size?: number; object_id?: string; account?: string; currency?: string; from?: number; to?: number },
  ): Promise<{ items: LedgerEntry[]; nextCursor: string | null }> {
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    let { from, to } = query;
    let refOrJournalId = query.object_id;
    const day = query.object_id === undefined ? undefined : dayOf(query.object_id);
    if (day !== undefined) {
      // A settlement's entries are its day's: the range narrows to it.
      from = Math.max(from ?? -Infinity, day * DAY_MS);
      to = Math.min(to ?? Infinity, (day + 1) * DAY_MS);
      refOrJournalId = undefined;
    }
    if (from !== undefined && to !== undefined && from >= to) return { items: [], nextCursor: null };
    const rows = await ledgerEntries(this.deps.store, {
      environment: auth.environment,
      merchantId: auth.merchantId,
      ...(refOrJournalId !== undefined ? { refOrJournalId } : {}),
      ...(query.account !== undefined ? { accounts: [this.accountName(auth, query.account)] } : {}),
      ...(query.currency !== undefined ? { currency: query.currency } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
      ...(query.cursor !== undefined ? { before: decodeCursor(query.cursor)! } : {}),
      limit: pageSize + 1,
    });
    const { items, nextCursor } = keysetPage(rows, pageSize);
    return { items: items.map((row) => this.presentEntry(auth, row)), nextCursor };
  }

  /** Reports of the days the wallet moved, newest first; the cursor names the last day seen. */
  async settlements(auth: AuthContext, query: { cursor?: string; page_size?: number }): Promise<{ items: SettlementSummary[]; nextCursor: string | null }> {
    const { store } = this.deps;
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const beforeDay = decodeCursor(query.cursor);
    const days = await activeDays(store, {
      environment: auth.environment,
      merchantId: auth.merchantId,
      accounts: this.walletAccounts(auth),
      ...(beforeDay !== undefined ? { beforeDay } : {}),
      limit: pageSize + 1,
    });
    // Days are the sequence here: the cursor names the last day seen.
    const page = keysetPage(
      days.map((day) => ({ seq: day })),
      pageSize,
    );
    const items: SettlementSummary[] = [];
    for (const { seq: day } of page.items) {
      const { lines: _lines, ...summary } = await this.report(store, auth, day);
      items.push(summary);
    }
    return { items, nextCursor: page.nextCursor };
  }

  /** One day's report; a day the wallet did not move has none (404, as its absence from the list says). */
  async settlement(auth: AuthContext, id: string): Promise<Settlement> {
    const { store } = this.deps;
    const day = dayOf(id);
    const moved =
      day === undefined
        ? []
        : await ledgerEntries(store, {
            environment: auth.environment,
            merchantId: auth.merchantId,
            accounts: this.walletAccounts(auth),
            from: day * DAY_MS,
            to: (day + 1) * DAY_MS,
            limit: 1,
          });
    if (day === undefined || moved.length === 0) throw new NotFoundError(`No such settlement: '${id}'`, { id });
    return this.report(store, auth, day);
  }

  /** The report's receipt lines as CSV (RFC 4180), one row per line, amounts in minor and major units. */
  async settlementCsv(auth: AuthContext, id: string): Promise<string> {
    const report = await this.settlement(auth, id);
    const header = ['settlement_id', 'date', 'line', 'object_type', 'object_id', 'direction', 'gross', 'fee', 'net', 'currency', 'gross_major', 'fee_major', 'net_major'];
    const rows = report.lines.map((line, index) => [
      report.id,
      report.date,
      String(index + 1),
      line.object_type,
      line.object_id,
      line.direction,
      String(line.gross),
      String(line.fee),
      String(line.net),
      report.currency,
      toMajorString(line.gross, 'GHS'),
      toMajorString(line.fee, 'GHS'),
      toMajorString(line.net, 'GHS'),
    ]);
    return `${[header, ...rows].map(csvRow).join('\r\n')}\r\n`;
  }

  private async report(db: Db, auth: AuthContext, day: number): Promise<Settlement> {
    const start = day * DAY_MS;
    const end = start + DAY_MS;
    const available = accounts.walletAvailable(auth.merchantId);
    const reserved = accounts.walletReserved(auth.merchantId);
    const fees = accounts.feeRevenue();
    const scope = { environment: auth.environment, merchantId: auth.merchantId };
    const opening = await balancesBefore(db, { ...scope, accounts: [available, reserved], currency: 'GHS', before: start });
    const postings = await ledgerEntries(db, { ...scope, accounts: [available, reserved, fees], currency: 'GHS', from: start, to: end });

    const byObject = new Map<string, { type: string; id: string; signedGross: number; fee: number; net: number; entries: number }>();
    let closingAvailable = opening.get(available) ?? 0;
    let closingReserved = opening.get(reserved) ?? 0;
    for (const posting of postings) {
      const object = objectOf(posting);
      const key = `${object.type}:${object.id}`;
      const line = byObject.get(key) ?? { ...object, signedGross: 0, fee: 0, net: 0, entries: 0 };
      byObject.set(key, line);
      line.entries += 1;
      if (posting.account === fees) {
        line.fee += posting.amount;
      } else {
        line.net += posting.amount;
        if (posting.account === available) closingAvailable += posting.amount;
        else closingReserved += posting.amount;
      }
    }
    // An object whose entries only moved money between available and reserved (a reservation, a
    // refund of one) changed nothing the report counts.
    const lines: SettlementLine[] = [];
    for (const line of byObject.values()) {
      if (line.net === 0 && line.fee === 0) continue;
      const signedGross = line.net + line.fee;
      lines.push({
        object_type: line.type,
        object_id: line.id,
        direction: signedGross >= 0 ? 'in' : 'out',
        gross: Math.abs(signedGross),
        fee: line.fee,
        net: line.net,
        entries: line.entries,
      });
    }
    const sum = (ls: SettlementLine[], pick: (l: SettlementLine) => number) => ls.reduce((total, l) => total + pick(l), 0);
    const incoming = lines.filter((l) => l.direction === 'in');
    const outgoing = lines.filter((l) => l.direction === 'out');
    const byType: Record<string, number> = {};
    for (const line of lines) byType[line.object_type] = (byType[line.object_type] ?? 0) + 1;
    const openingBalance = (opening.get(available) ?? 0) + (opening.get(reserved) ?? 0);
    return {
      id: settlementIdOf(start),
      object: 'settlement',
      date: iso(start).slice(0, 10),
      status: this.deps.clock.now() < end ? 'open' : 'closed',
      currency: 'GHS',
      period_start: iso(start),
      period_end: iso(end),
      opening_balance: openingBalance,
      closing_balance: closingAvailable + closingReserved,
      closing_available: closingAvailable,
      closing_reserved: closingReserved,
      gross_in: sum(incoming, (l) => l.gross),
      gross_out: sum(outgoing, (l) => l.gross),
      fees: sum(lines, (l) => l.fee),
      net: sum(lines, (l) => l.net),
      counts: { in: incoming.length, out: outgoing.length, by_object: byType },
      livemode: auth.environment === 'live',
      lines,
    };
  }

  private walletAccounts(auth: AuthContext): string[] {
    return [accounts.walletAvailable(auth.merchantId), accounts.walletReserved(auth.merchantId)];
  }

  /** wallet:available and wallet:reserved are shorthand for the caller's own wallet accounts. */
  private accountName(auth: AuthContext, account: string): string {
    if (account === 'wallet:available') return accounts.walletAvailable(auth.merchantId);
    if (account === 'wallet:reserved') return accounts.walletReserved(auth.merchantId);
    return account;
  }

  private presentEntry(auth: AuthContext, row: LedgerEntryRow): LedgerEntry {
    const object = objectOf(row);
    return {
      id: `${row.journal_id.replace(/^jrn_/, 'ent_')}_${row.position}`,
      object: 'ledger_entry',
      object_type: object.type,
      object_id: object.id,
      journal_id: row.journal_id,
      journal_kind: row.kind,
      memo: row.memo,
      reverses: row.reverses,
      account: row.account,
      direction: row.amount > 0 ? 'credit' : 'debit',
      amount: Math.abs(row.amount),
      currency: row.currency,
      settlement_id: settlementIdOf(row.created_at),
      livemode: auth.environment === 'live',
      created_at: iso(row.created_at),
    };
  }
}

/** One RFC 4180 row: fields with a comma, quote or line break are quoted, quotes doubled. */
function csvRow(fields: string[]): string {
  return fields.map((f) => (/[",\r\n]/.test(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(',');
}
