// A streaming replica of the test PostgreSQL server, made with pg_basebackup and started on a free
// port (test/ops/replicas.test.ts, bench/replica-lag.ts). Needs the server binaries (PG_BIN) and
// root, to run them as the postgres user and, when the server has no replication rule for
// 127.0.0.1, to add one to its pg_hba.conf (then reloaded; never restarted).
import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { TEST_DATABASE_URL } from './app.ts';

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

const asPostgres = (cmd: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, cmd), ...args], { stdio: 'pipe' }).toString();

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function admin<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** The server must accept replication connections from 127.0.0.1: added (and reloaded) only when missing. */
async function allowReplication(): Promise<void> {
  await admin(TEST_DATABASE_URL, async (c) => {
    const rules = await c.query(
      "select 1 from pg_hba_file_rules where 'replication' = any(database) and type = 'host' and address = '127.0.0.1' and auth_method = 'trust'",
    );
    if (rules.rowCount) return;
    const file = (await c.query('show hba_file')).rows[0].hba_file as string;
    if (!/^\s*host\s+replication\s+all\s+127\.0\.0\.1\/32\s+trust\s*$/m.test(readFileSync(file, 'utf8'))) {
      appendFileSync(file, '\n# added by the platform replica test\nhost replication all 127.0.0.1/32 trust\n');
    }
    await c.query('select pg_reload_conf()');
  });
}

export interface Standby {
  url: string;
  dir: string;
  stop(mode?: 'fast' | 'immediate'): void;
}

export async function startStandby(): Promise<Standby> {
  await allowReplication();
  const primary = new URL(TEST_DATABASE_URL);
  const settings = await admin(TEST_DATABASE_URL, async (c) => {
    // a hot standby needs these at least as high as on the primary
    const names = [
      'max_connections',
      'max_worker_processes',
      'max_wal_senders',
      'max_prepared_transactions',
      'max_locks_per_transaction',
    ];
    const out: Record<string, string> = {};
    for (const n of names) out[n] = (await c.query(`show ${n}`)).rows[0][n];
    return out;
  });
  const dir = mkdtempSync(join(tmpdir(), 'platform-replica-'));
  chownSync(dir, uidOf('postgres'), gidOf('postgres'));
  const data = join(dir, 'data');
  asPostgres('pg_basebackup', [
    '-h',
    primary.hostname,
    '-p',
    primary.port || '5432',
    '-U',
    primary.username || 'postgres',
    '-D',
    data,
    '-X',
    'stream',
    '-R',
    '-c',
    'fast',
  ]);
  const port = await freePort();
  const conf = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    'hot_standby = on',
    ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`),
  ];
  writeFileSync(join(data, 'postgresql.conf'), `${conf.join('\n')}\n`);
  writeFileSync(join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
  chownSync(join(data, 'postgresql.conf'), uidOf('postgres'), gidOf('postgres'));
  chownSync(join(data, 'pg_hba.conf'), uidOf('postgres'), gidOf('postgres'));
  asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '120', 'start']);
  const url = new URL(TEST_DATABASE_URL);
  url.port = String(port);
  let stopped = false;
  return {
    url: url.toString(),
    dir,
    stop(mode = 'fast') {
      if (stopped) return;
      stopped = true;
      try {
        asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      } catch {
        // already gone
      }
    },
  };
}

const uidOf = (user: string) => Number(execFileSync('id', ['-u', user]).toString().trim());
const gidOf = (user: string) => Number(execFileSync('id', ['-g', user]).toString().trim());
