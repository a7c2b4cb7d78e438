import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import Redis from 'ioredis';

/** A throw-away redis-server of the test's own, on a free local port, that a test may stop and start. */
export class TestRedis {
  private process: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<TestRedis> {
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as { port: number }).port;
    probe.close();
    const redis = new TestRedis(port);
    await redis.up();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.process = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const client = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.ping();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        client.disconnect();
      }
    }
    throw new Error(`redis-server did not start on ${this.port}`);
  }

  async down(): Promise<void> {
    if (!this.process) return;
    const exited = once(this.process, 'exit');
    this.process.kill('SIGKILL');
    await exited;
    this.process = null;
  }
}
