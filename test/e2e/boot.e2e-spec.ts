import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { AddressInfo, createServer } from 'node:net';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { describeDatabaseUrl } from '../../src/database/database-url';
import { freePort, TS_NODE } from './setup/processes';

const run = promisify(execFile);

async function waitForHealth(base: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 40_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited: ${output()}`);
    const ok = await fetch(`${base}/health`).then((r) => r.status === 200, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the service did not answer /health: ${output()}`);
}

/**
 * The service as `npm start` runs it (src/main.ts), in its own process: it creates a database that does
 * not exist, migrates it, serves, and logs JSON lines with request ids and no keys. The CLI creates a
 * seller whose keys then work against it.
 */
describe('Booting the service and the operator CLI', () => {
  const url = new URL(process.env.E2E_DATABASE_URL as string);
  url.pathname = `${url.pathname}_boot`;
  const databaseUrl = url.toString();
  let child: ChildProcess;
  let output = '';
  let base: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [...TS_NODE, 'src/main.ts'], {
      env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'info', LOG_FILE: undefined, ADMIN_TOKEN: undefined },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    await waitForHealth(base, child, () => output);
  }, 60_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    const { databaseName, maintenanceUrl } = describeDatabaseUrl(databaseUrl);
    const maintenance = await new DataSource({ type: 'postgres', url: maintenanceUrl }).initialize();
    await maintenance.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
    await maintenance.destroy();
  });

  it('creates the database, migrates it and serves; a CLI-made seller reads its account and balance', async () => {
    const { stdout } = await run(process.execPath, [...TS_NODE, 'src/cli.ts', 'seller:create', '--name', 'Loja', '--email', 'loja@example.com'], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    const created = JSON.parse(stdout);
    expect(created).toEqual({
      seller: expect.objectContaining({ legalName: 'Loja', user: expect.objectContaining({ email: 'loja@example.com' }) }),
      credentials: { publicKey: expect.stringMatching(/^pk_/), privateKey: expect.stringMatching(/^sk_/) },
      postbackSecret: expect.stringMatching(/^whsec_/),
      invitation: { url: expect.stringMatching(/\/dashboard\/invitation\//), expiresAt: expect.any(String), revokedInvitations: 0 },
    });
    const invited = await run(process.execPath, [...TS_NODE, 'src/cli.ts', 'seller:invite', '--seller-id', String(created.seller.id)], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    expect(JSON.parse(invited.stdout)).toEqual({ invitation: { url: expect.stringMatching(/\/dashboard\/invitation\/[A-Za-z0-9_-]{43}$/), expiresAt: expect.any(String), revokedInvitations: 1 } });
    expect(JSON.parse(invited.stdout).invitation.url).not.toBe(created.invitation.url);
    const headers = { 'X-Api-Public-Key': created.credentials.publicKey, 'X-Api-Private-Key': created.credentials.privateKey };

    const account = await fetch(`${base}/api/seller`, { headers });
    expect(account.status).toBe(200);
    expect(await account.json()).toMatchObject({ id: created.seller.id, userId: created.seller.id, blocked: false });
    const balance = await fetch(`${base}/api/public/balance`, { headers });
    expect(await balance.json()).toEqual({ available: 0, blocked: 0, total: 0 });

    // JSON log lines, one per request with its id, method, URL and status (no headers), and never the private key.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const lines = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    const requestLine = lines.find((line) => line.req?.url === '/api/seller');
    expect(requestLine).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: expect.any(Number),
      hostname: expect.any(String),
      req: { id: expect.any(String), method: 'GET', url: '/api/seller' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
      msg: 'request completed',
    });
    expect(output).not.toContain(created.credentials.privateKey);
  });

  it('refuses to create a second seller with the same e-mail from the CLI, with one line and exit 1', async () => {
    const failure = await run(process.execPath, [...TS_NODE, 'src/cli.ts', 'seller:create', '--name', 'Loja', '--email', 'loja@example.com'], {
      env: { ...process.env, DATABASE_URL: databaseUrl },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim()).toMatch(/^CONFLICT: .*loja@example.com/);
  });

  it('stops at boot with a one-line reason when the configuration is bad', async () => {
    const failure = await run(process.execPath, [...TS_NODE, 'src/main.ts'], {
      env: { ...process.env, PORT: 'eighty', DATABASE_URL: databaseUrl },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim()).toBe('Invalid configuration: PORT must be an integer between 1 and 65535');
  });

  it('refuses to boot in production without ENCRYPTION_KEY (the development key is in the repository)', async () => {
    const failure = await run(process.execPath, [...TS_NODE, 'src/main.ts'], {
      env: { ...process.env, NODE_ENV: 'production', ENCRYPTION_KEY: undefined, DATABASE_URL: databaseUrl },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim()).toBe('Invalid configuration: ENCRYPTION_KEY is required when NODE_ENV=production (64 hexadecimal characters)');
  });

  it('refuses to boot in production without SESSION_SECRET (the development secret is in the repository)', async () => {
    const failure = await run(process.execPath, [...TS_NODE, 'src/main.ts'], {
      env: { ...process.env, NODE_ENV: 'production', ENCRYPTION_KEY: 'ab'.repeat(32), SESSION_SECRET: undefined, DATABASE_URL: databaseUrl },
    }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr.trim()).toBe('Invalid configuration: SESSION_SECRET is required when NODE_ENV=production (32 characters or more)');
  });

  it('refuses to boot on a Redis older than its minimum (2.8.18), with a one-line reason', async () => {
    // A stand-in that answers every command as Redis 2.6 answers INFO: all the boot asks of it. It answers
    // each command of a packet (a client may send its ready check and INFO server in one write).
    const info = '# Server\r\nredis_version:2.6.17\r\nloading:0\r\n';
    const old = createServer((socket) =>
      socket.on('data', (data: Buffer) => {
        const commands = data.toString('latin1').match(/(?:^|\r\n)\*\d+\r\n/g)?.length ?? 1;
        socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`.repeat(commands));
      }),
    );
    old.listen(0, '127.0.0.1');
    await once(old, 'listening');
    try {
      const failure = await run(process.execPath, [...TS_NODE, 'src/main.ts'], {
        env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${(old.address() as AddressInfo).port}`, DATABASE_URL: databaseUrl, PORT: String(await freePort()) },
        timeout: 30_000,
      }).then(
        () => null,
        (error: { code: number | null; stderr: string }) => error,
      );
      // Both at once, so that a boot that went on (killed at the timeout, code null) shows what it printed.
      expect({ code: failure?.code, stderr: failure?.stderr.trim() }).toEqual({
        code: 1,
        stderr: 'Redis 2.6.17 answers at REDIS_URL: the service needs Redis 2.8.18 or later',
      });
    } finally {
      old.close();
    }
  }, 45_000);

  it('warns at boot in production while TRUST_PROXY is false: behind a TLS proxy the session cookie would not be Secure', async () => {
    const port = await freePort();
    const production = spawn(process.execPath, [...TS_NODE, 'src/main.ts'], {
      env: { ...process.env, NODE_ENV: 'production', ENCRYPTION_KEY: 'ab'.repeat(32), SESSION_SECRET: 's'.repeat(40), TRUST_PROXY: undefined, PORT: String(port), DATABASE_URL: databaseUrl, LOG_FILE: undefined, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let logged = '';
    production.stdout?.on('data', (chunk) => (logged += chunk));
    production.stderr?.on('data', (chunk) => (logged += chunk));
    try {
      await waitForHealth(`http://127.0.0.1:${port}`, production, () => logged);
      const warnings = logged.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)).filter((line) => line.level === 40);
      expect(warnings.map((line) => line.msg)).toContainEqual(expect.stringMatching(/^TRUST_PROXY is false in production: .*session cookie is not marked Secure/));
    } finally {
      production.kill('SIGTERM');
      await once(production, 'exit');
    }
  }, 60_000);
});
