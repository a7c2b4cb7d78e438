import { once } from 'node:events';
import { connect, Socket } from 'node:net';
import { browserOf, csrfOf, postForm, signedIn } from './setup/dashboard-forms';
import { adminHeaders } from './setup/factories';
import { Receiver } from './setup/receiver';
import { TestRedis } from './setup/redis-server';
import { startApp, TestApp } from './setup/test-app';

/** A MONITOR line of an EXPIRE with an option (NX, XX, GT, LT), which Redis refuses before 7.0 (a MULTI holding one is aborted whole). */
const QUOTED = '"(?:[^"\\\\]|\\\\.)*"';
const REDIS_7_EXPIRE = new RegExp(`\\] "p?expire(at)?" ${QUOTED} ${QUOTED} ${QUOTED}`, 'i');

/**
 * The service runs on any Redis from 2.8.18 (README, Run it): the counters it keeps itself (sign-in
 * attempts, manual sends) use no command or option of a later Redis (issue 19, point 7). Every command a
 * Redis of the test's own receives is watched with MONITOR while they count.
 */
describe('Redis commands the counters send', () => {
  let redis: TestRedis;
  let t: TestApp;
  let monitor: Socket;
  let receiver: Receiver;
  let seen = '';

  beforeAll(async () => {
    redis = await TestRedis.start();
    receiver = await Receiver.start();
    t = await startApp({ REDIS_URL: redis.url, TRUST_PROXY: 'loopback', LOGIN_MAX_ATTEMPTS_PER_ACCOUNT: '3', MANUAL_SENDS_PER_HOUR: '1' });
    // MONITOR on a raw connection: one line per command the server runs, scripts' commands included.
    monitor = connect(redis.port, '127.0.0.1');
    await once(monitor, 'connect');
    monitor.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')));
    monitor.write('MONITOR\r\n');
  });
  afterAll(async () => {
    monitor?.destroy();
    await t?.close();
    await receiver?.close();
    await redis?.down();
  });

  it('counts failed sign-ins and manual sends without an EXPIRE option of Redis 7', async () => {
    const { seller, browser } = await signedIn(t);
    const email = (seller.body.seller as { user: { email: string } }).user.email;
    const visitor = browserOf(t);
    const token = csrfOf((await visitor.get('/dashboard/login').expect(200)).text);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await visitor.post('/dashboard/login').type('form').send({ _csrf: token, email, password: 'nao-e-a-senha' })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);

    const webhooks = '/dashboard/integrations/webhooks';
    expect((await postForm(browser, webhooks, webhooks, { url: `${receiver.url}/w`, type: 'WITHDRAWAL' })).status).toBe(303);
    const [webhook] = (await t.http.get(`/admin/sellers/${seller.id}/webhooks`).set(adminHeaders).expect(200)).body;
    const sends = [await postForm(browser, webhooks, `${webhooks}/${webhook.id}/test`), await postForm(browser, webhooks, `${webhooks}/${webhook.id}/test`)];
    expect(sends.map((answer) => answer.status)).toEqual([303, 429]);

    await new Promise((resolve) => setTimeout(resolve, 200)); // the last commands reach the monitor
    const lines = seen.split('\r\n');
    expect(lines.filter((line) => /\] "incr" "(login|manual-sends):/i.test(line)).length).toBeGreaterThan(0); // the monitor saw the counters
    expect(lines.filter((line) => REDIS_7_EXPIRE.test(line))).toEqual([]);
  });
});
