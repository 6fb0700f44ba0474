import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The job a piece of work is done for, carried through its awaits. Jobs of one round run side by
 * side; what a merchant or a replay can see must not depend on which finished first, so a job
 * draws its ids from its own stream, its store transactions take their turn in the round's
 * order, and what it records on the timeline sorts into that order too.
 */
export interface JobScope {
  readonly jobId: string;
  /** The round the job ran in, and its place in it: the order a serial run takes. */
  readonly round: number;
  readonly rank: number;
  /** The job's own id stream (an IdGenerator forked from the job's identity), or undefined: the shared one. */
  readonly ids: object | undefined;
  /** Resolves when every job before this one in the round has finished (or sealed): its writes go next. */
  turn(): Promise<void>;
  /** The job has asked for its last transaction: the jobs after it need not wait for it to finish. */
  seal(): void;
  /** Set by finalWrites(): the next transaction the job asks for is its last. */
  finalSection: boolean;
  /** Counts what the job records (timeline entries), to keep their order within the job. */
  entries: number;
}

const scopes = new AsyncLocalStorage<JobScope>();
/**
 * Running jobs by a token unique in this process: two sandboxes in one process (a replay beside
 * the served one) may run jobs of the same id at once, and must not join each other's.
 */
const running = new Map<string, JobScope>();
const tokens = new WeakMap<JobScope, string>();
let started = 0;

/** The job the current work is done for, if any. */
export function currentJob(): JobScope | undefined {
  return scopes.getStore();
}

/** Runs a job's work in its scope; while it runs, work that names it (runningJob) can join it. */
export async function inJobScope<T>(scope: JobScope, work: () => Promise<T>): Promise<T> {
  const token = `${scope.jobId}.${++started}`;
  running.set(token, scope);
  tokens.set(scope, token);
  try {
    return await scopes.run(scope, work);
  } finally {
    running.delete(token);
  }
}

/**
 * Work done on behalf of a job running in this process, such as a mock's callback reaching the
 * service's receiver over HTTP: it joins the job's scope. A name that is no running job (anything
 * from outside, or a job already finished) changes nothing.
 */
export function joinRunningJob<T>(token: string | undefined, work: () => T): T {
  const scope = token ? running.get(token) : undefined;
  return scope ? scopes.run(scope, work) : work();
}

/** The header a job's in-process HTTP calls carry, so the handler on the other side joins it. */
export const JOB_HEADER = 'railyard-job';

/** The header to send from the current job, if any: its token for joinRunningJob. */
export function jobHeader(): Record<string, string> {
  const scope = scopes.getStore();
  const token = scope && tokens.get(scope);
  return token ? { [JOB_HEADER]: token } : {};
}

/**
 * `work` bound to the caller's job (or to none): for work that something else runs later in its
 * own context, such as a store running the transactions of a batch one after another.
 */
export function boundToCaller<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R {
  const scope = scopes.getStore();
  return scope ? (...args) => scopes.run(scope, () => work(...args)) : (...args) => scopes.exit(() => work(...args));
}

/**
 * Asks a store for a transaction (`start` queues it) in the current job's turn: once every job
 * before it in its round has finished, or has asked for its last transaction. Outside a job, at once.
 */
export function inJobTurn<T>(start: () => Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  if (!scope) return start();
  return scope.turn().then(() => {
    const started = start();
    // Queued: the store runs it before anything asked for later, so the jobs after this one may go.
    if (scope.finalSection) scope.seal();
    return started;
  });
}

/**
 * Marks what `work` does as the current job's last writes: one store transaction at most (in
 * this process, or in a receiver that joins the job). The jobs after it in its round may then
 * queue their transactions as soon as that one is queued, into the same group commit, instead of
 * waiting for the job to finish. A job that wrote again after it would break the round's order.
 */
export function finalWrites<T>(work: () => Promise<T>): Promise<T> {
  const scope = scopes.getStore();
  if (scope) scope.finalSection = true;
  return work();
}
