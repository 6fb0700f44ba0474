import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processTree } from '../test/support/process-tree.ts';

// CPU time of a process tree (a PostgreSQL server and its backends, npm and the railyard node
// process), from /proc/<pid>/stat, so a measure can divide it by the operations a round completed.

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  ticksPerSecond ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return ticksPerSecond;
}

/**
 * The CPU clock ticks a `/proc/.../stat` line records: utime and stime, and with `children` also
 * cutime and cstime (fields 14 to 17; the fields are counted after the command name, which may
 * hold spaces).
 */
function statTicks(stat: string, children: boolean): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return children ? own + Number(fields[13]) + Number(fields[14]) : own;
}

/**
 * ms of CPU (user + system) the tree under `root` has used so far. A child's time moves into its
 * parent's cutime/cstime when the parent reaps it, so summing all four over the live tree keeps
 * the time of backends that ended between two readings.
 */
export function treeCpuMs(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    ticks += statTicks(stat, true);
  }
  return (ticks * 1_000) / clockTicks();
}

/**
 * ms of CPU (user + system) the main thread of `pid` has used so far: the JavaScript thread that
 * answers the API (and runs the jobs but on the served sandbox's system clock, where they have a
 * thread of their own), apart from the helper threads (GC, checkpoints, the HTTP exchange).
 */
export function mainThreadCpuMs(pid: number): number {
  return (statTicks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'), false) * 1_000) / clockTicks();
}

/** ms of CPU this process (the bench, whose autocannon is the load generator) has used so far. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

/** CPU used during one load round by the database, the servers under load and the load generator. */
export interface RoundCpu {
  /** ms of the database server's processes (NaN when the bench did not start the server). */
  databaseMs: number;
  /** ms of the railyard (or baseline) process trees the round loaded. */
  serverMs: number;
  /** ms of the bench process, that is autocannon. */
  loadMs: number;
}

/** Reads the three CPU counters now; the returned function reads them again and gives the difference. */
export function startCpuReading(databasePid: number | undefined, serverRoots: number[]): () => RoundCpu {
  const read = (): RoundCpu => ({
    databaseMs: databasePid === undefined ? Number.NaN : treeCpuMs(databasePid),
    serverMs: serverRoots.reduce((sum, root) => sum + treeCpuMs(root), 0),
    loadMs: ownCpuMs(),
  });
  const before = read();
  return () => {
    const after = read();
    return { databaseMs: after.databaseMs - before.databaseMs, serverMs: after.serverMs - before.serverMs, loadMs: after.loadMs - before.loadMs };
  };
}
