// A throwaway PostgreSQL cluster for tests: initdb into a temporary directory, postgres on a free
// port with its socket there too, one fresh database per caller, everything removed on stop().
// With RAILYARD_TEST_PG_URL set (a superuser URL of a running server), that server is used
// instead: the databases are created in it and dropped on stop().
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PostgresCluster {
  /** A URL of a new, empty database of its own. */
  createDatabase(): Promise<string>;
  /** Drops a database createDatabase made (connections to it are ended). */
  dropDatabase(url: string): Promise<void>;
  /** Drops what it created; stops and removes the cluster when it started one. */
  stop(): Promise<void>;
  /** The pid under which the started server's processes run (absent on RAILYARD_TEST_PG_URL's server). */
  serverPid?: number;
}

export interface PostgresClusterOptions {
  /**
   * The server's `-c` settings besides its address, port and socket. Default THROWAWAY_SETTINGS;
   * `{}` runs the server on its defaults (fsync on), as a plain `postgres` starts.
   */
  settings?: Record<string, string>;
}

/** A throwaway cluster: durability off, small memory, so several test files can each run one. */
export const THROWAWAY_SETTINGS: Readonly<Record<string, string>> = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
  shared_buffers: '16MB',
  max_connections: '60',
  max_pred_locks_per_transaction: '256',
};

export const INSTALL_HINT =
  'PostgreSQL is needed for these tests: install the Debian package `postgresql` (apt-get install -y postgresql, which .ci/run does), or set RAILYARD_TEST_PG_URL to a superuser URL of a running server';

/** The newest installed server's bin directory, e.g. /usr/lib/postgresql/15/bin. */
export function findPostgresBinaries(root = '/usr/lib/postgresql'): string {
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) throw new Error(`no ${root}/*/bin/initdb found. ${INSTALL_HINT}`);
  return join(root, versions[0]!, 'bin');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** initdb refuses to run as root: as root, the cluster belongs to the `postgres` user. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isInteger(uid) || uid <= 0) throw new Error(`running as root and there is no 'postgres' user to run the cluster as. ${INSTALL_HINT}`);
  return { uid, gid: id('-g') };
}

async function waitUntilReady(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited with ${server.exitCode}:\n${log()}`);
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 30 s (${String(error)}):\n${log()}`);
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

async function onServer(adminUrl: string): Promise<PostgresCluster> {
  const created: string[] = [];
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    async createDatabase() {
      const name = `railyard_test_${randomBytes(6).toString('hex')}`;
      // C collation: text sorts by byte, as SQLite sorts it.
      await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`));
      created.push(name);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropDatabase(url) {
      const name = new URL(url).pathname.slice(1);
      if (!created.includes(name)) throw new Error(`not a database this cluster created: ${name}`);
      created.splice(created.indexOf(name), 1);
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
    async stop() {
      await admin(async (c) => {
        for (const name of created.splice(0)) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}

export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const given = process.env.RAILYARD_TEST_PG_URL;
  if (given) return onServer(given);

  const bin = findPostgresBinaries();
  const owner = runAs();
  const dir = mkdtempSync(join(tmpdir(), 'railyard-pg-'));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '--auth=trust', '--username=postgres', '--encoding=UTF8', '--locale=C', '--no-sync'], { encoding: 'utf8', cwd: dir, ...owner });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status ?? init.error}):\n${init.stderr}${init.error ? `\n${init.error}` : ''}`);
  }

  const port = await freePort();
  const log = join(dir, 'postgres.log');
  const settings = { listen_addresses: '127.0.0.1', ...(options.settings ?? THROWAWAY_SETTINGS) };
  const args = ['-D', data, '-p', String(port), '-k', dir, ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`])];
  // postgres runs under a small shell that, on SIGINT, stops it (fast shutdown) and removes the
  // directory. setpriv --pdeathsig sends the shell that SIGINT when this test process dies in any
  // way (a test worker is often killed rather than left to exit), so no cluster outlives its tests.
  const watchdog = `pg="$1"; dir="$2"; shift 2
trap '' PIPE
"$pg" "$@" >"$dir/postgres.log" 2>&1 &
p=$!
stopped=0
trap 'stopped=1; kill -INT "$p" 2>/dev/null' INT TERM
wait "$p"; wait "$p"
[ "$stopped" = 1 ] || tail -n 40 "$dir/postgres.log" >&2
rm -rf "$dir"`;
  const shell = ['/bin/sh', '-c', watchdog, 'postgres-watchdog', join(bin, 'postgres'), dir, ...args];
  const [command, ...commandArgs] = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'INT', '--', ...shell] : shell;
  const server = spawn(command!, commandArgs, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], ...owner });
  let died = ''; // the log's tail, when postgres stopped on its own
  server.stderr!.on('data', (chunk: Buffer) => (died += chunk.toString()));
  const output = () => died || (existsSync(log) ? readFileSync(log, 'utf8') : '(no log)');
  // Should this process exit normally without stop(), the server still goes.
  const stopOnExit = () => server.kill('SIGINT');
  process.on('exit', stopOnExit);

  const stopServer = async () => {
    process.off('exit', stopOnExit);
    if (server.exitCode === null && server.signalCode === null) {
      const exited = new Promise<void>((done) => server.once('exit', () => done()));
      server.kill('SIGINT');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };

  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  try {
    await waitUntilReady(adminUrl, server, output);
  } catch (error) {
    await stopServer();
    throw error;
  }
  const inner = await onServer(adminUrl);
  return {
    createDatabase: () => inner.createDatabase(),
    dropDatabase: (url) => inner.dropDatabase(url),
    async stop() {
      await stopServer(); // the databases go with the cluster
    },
    ...(server.pid !== undefined ? { serverPid: server.pid } : {}),
  };
}

let shared: Promise<PostgresCluster> | undefined;

/**
 * One cluster for the whole test process, started on first use and removed when the process exits:
 * for helpers such as startTestSandbox that cannot add an afterAll of their own.
 */
export function processPostgresCluster(): Promise<PostgresCluster> {
  shared ??= startPostgresCluster();
  return shared;
}
