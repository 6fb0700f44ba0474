import { type AppendStatement, appendShape } from './append-only-db.ts';

/** The appends of one append-only transaction: committed together, or not at all. */
interface AppendSet {
  statements: AppendStatement[];
  done: () => void;
  fail: (error: unknown) => void;
}

/** At most this many transactions commit as one: bounds the statements' size and a failed batch's retry. */
const MAX_SETS = 64;
/** PostgreSQL takes at most 65,535 parameters a statement; a merged insert stays well under. */
const MAX_PARAMS = 30_000;

/**
 * The appends of several transactions as few statements: those of one SQL text become one insert
 * of all their rows (when its shape has a VALUES row), in the order issued, the texts in the order
 * each first appears. Appends read nothing, so none depends on another's order but for a reference
 * to a row another inserts, which every transaction issues parent first, and so does the merge.
 */
export function mergeAppends(statements: readonly AppendStatement[]): AppendStatement[] {
  const bySql = new Map<string, AppendStatement[]>();
  for (const statement of statements) {
    const same = bySql.get(statement.sql);
    if (same) same.push(statement);
    else bySql.set(statement.sql, [statement]);
  }
  const merged: AppendStatement[] = [];
  for (const [sql, rows] of bySql) {
    const { values, params } = appendShape(sql);
    if (rows.length === 1 || !values) {
      merged.push(...rows);
      continue;
    }
    const perStatement = Math.max(1, Math.floor(MAX_PARAMS / Math.max(1, params)));
    for (let start = 0; start < rows.length; start += perStatement) {
      const chunk = rows.slice(start, start + perStatement);
      merged.push({
        sql: `${values.head}${Array.from(chunk, () => values.tuple).join(', ')}${values.tail}`,
        params: chunk.flatMap((row) => row.params),
      });
    }
  }
  return merged;
}

/**
 * Group commit for append-only transactions on a store whose every statement costs a round trip
 * and a parse, bind and execution of its own (PostgreSQL): the transactions asked for while
 * earlier batches are committing wait, then commit as one transaction of merged inserts
 * (mergeAppends). Fifty quotes then cost three inserts, not 150. A transaction asked for when
 * nothing is committing goes at the next turn of the event loop, with whatever joined it.
 *
 * If a batch fails (one transaction's row breaks a constraint, say), each of its transactions
 * commits again alone: only the one at fault fails, and nothing of it stands.
 */
export class GroupCommit {
  private readonly waiting: AppendSet[] = [];
  private committing = 0;
  private scheduled = false;

  /**
   * @param commit commits these statements as one transaction, or rejects with nothing of them standing.
   * @param parallel how many batches may be committing at once.
   */
  constructor(
    private readonly commit: (statements: AppendStatement[]) => Promise<void>,
    private readonly parallel: number,
  ) {}

  /** Commits `statements` as one transaction, with others' if it can. */
  add(statements: AppendStatement[]): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.waiting.push({ statements, done, fail });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  private pump(): void {
    while (this.committing < this.parallel && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_SETS);
      this.committing++;
      void this.commitBatch(batch).finally(() => {
        this.committing--;
        this.pump();
      });
    }
  }

  private async commitBatch(batch: AppendSet[]): Promise<void> {
    try {
      await this.commit(mergeAppends(batch.flatMap((set) => set.statements)));
      for (const set of batch) set.done();
      return;
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.fail(error);
        return;
      }
    }
    // One of them is at fault: each commits alone, so that only it fails.
    await Promise.all(
      batch.map((set) =>
        this.commit(set.statements).then(
          () => set.done(),
          (error: unknown) => set.fail(error),
        ),
      ),
    );
  }
}
