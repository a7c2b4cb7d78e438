import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { logMask, maskLiteralsInLine, maskPathFields, maskUrlForLog, requestIdFor, requestLogMiddleware } from './logging.module';

const ADMIN_TOKEN = 'admin-token-0123456789';
const mask = logMask([ADMIN_TOKEN, null]);

describe('the logged URL', () => {
  it('masks a private key or postback secret wherever a client put it: a path id, glued to a word, percent-encoded', () => {
    const key = 'sk_Zk3v9Qm1AbCdEfGhIjKlMn';
    expect(maskUrlForLog(`/api/transactions/${key}?token=%73k_Zk3v9Qm1AbCdEfGhIjKlMn&w=order_whsec_q8WAbCdEfGhIjKl`, mask)).toBe(
      '/api/transactions/[redacted]?token=[redacted]&w=order_[redacted]',
    );
    expect(maskUrlForLog(`/api/transactions/${key}?bad=%E0%A4%A`, mask)).toBe('/api/transactions/[redacted]?bad=%E0%A4%A');
    // A postback secret of the Standard Webhooks form (base64: + / =), whole.
    expect(maskUrlForLog('/x?s=whsec_a+b/MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwc=&n=1', mask)).toBe('/x?s=[redacted]&n=1');
  });

  it('masks card numbers (Luhn-valid runs of 12 to 19 digits), invitation tokens and the literal secrets it is given, and keeps other numbers', () => {
    expect(maskUrlForLog(`/api/subscriptions?search=5555555555554444&token=${ADMIN_TOKEN}&at=1795438501210`, mask)).toBe(
      '/api/subscriptions?search=[redacted]&token=[redacted]&at=1795438501210',
    );
    expect(maskUrlForLog('/dashboard/invitation/q8WAbCdEfGhIjKlq8WAbCdEfGhIjKl', mask)).toBe('/dashboard/invitation/[redacted]');
  });

  it('still decodes the rest of a URL that holds one bad percent-escape, and a secret encoded twice', () => {
    expect(maskUrlForLog('/api/seller?bad=%E0%A4%A&token=%73k_Zk3v9Qm1AbCdEfGhIjKlMn', mask)).toBe('/api/seller?bad=%E0%A4%A&token=[redacted]');
    expect(maskUrlForLog('/api/seller?bad=%ZZ&card=%35555555555554444', mask)).toBe('/api/seller?bad=%ZZ&card=[redacted]');
    expect(maskUrlForLog(`/api/seller?bad=%&t=${ADMIN_TOKEN.replace('-', '%2D')}`, mask)).toBe('/api/seller?bad=%&t=[redacted]');
    expect(maskUrlForLog('/api/seller?token=%2573k_Zk3v9Qm1AbCdEfGhIjKlMn', mask)).toBe('/api/seller?token=[redacted]');
  });

  it('masks a card number written in groups (spaces, dashes, plus signs, dots, underscores), and keeps dates, versions and short groups', () => {
    expect(maskUrlForLog('/dashboard/sales?search=5555%205555%205555%204444&page=2', mask)).toBe('/dashboard/sales?search=[redacted]&page=2');
    expect(maskUrlForLog('/dashboard/sales?search=5555-5555-5555-4444', mask)).toBe('/dashboard/sales?search=[redacted]');
    expect(maskUrlForLog('/dashboard/sales?search=5555+5555+5555+4444', mask)).toBe('/dashboard/sales?search=[redacted]');
    expect(maskUrlForLog('/dashboard/sales?search=5555.5555.5555.4444', mask)).toBe('/dashboard/sales?search=[redacted]');
    expect(maskUrlForLog('/api/transactions/5555_5555_5555_4444', mask)).toBe('/api/transactions/[redacted]');
    expect(maskUrlForLog('/api/transactions/5555.5555-5555_4444?v=1.2.3', mask)).toBe('/api/transactions/[redacted]?v=1.2.3');
    expect(maskUrlForLog('/dashboard/sales?startDate=2026-11-23&endDate=2026-11-30&search=11 98765-4321', mask)).toBe(
      '/dashboard/sales?startDate=2026-11-23&endDate=2026-11-30&search=11 98765-4321',
    );
  });

  it('leaves a public key and ordinary values as they are', () => {
    expect(maskUrlForLog('/api/seller?key=pk_Zk3v9Qm1AbCdEfGhIjKlMn&page=2', mask)).toBe('/api/seller?key=pk_Zk3v9Qm1AbCdEfGhIjKlMn&page=2');
  });
});

describe('other lines', () => {
  it('name a request path or URL masked (the error filters log the path of a 5xx)', () => {
    const format = maskPathFields(mask);
    expect(format({ requestId: 'r', path: '/api/transactions/5555555555554444', url: '/dashboard/invitation/q8WAbCdEfGhIjKl', n: 1 })).toEqual({
      requestId: 'r',
      path: '/api/transactions/[redacted]',
      url: '/dashboard/invitation/[redacted]',
      n: 1,
    });
    const plain = { requestId: 'r', saleId: 5 };
    expect(format(plain)).toBe(plain);
  });
});

describe('the request line', () => {
  function harness() {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const middleware = requestLogMiddleware(pino({ level: 'info' }, sink), mask);
    const serve = (method: string, url: string, status: number, headers: Record<string, string> = {}) => {
      const request = Object.assign(new EventEmitter(), { method, url, originalUrl: url, headers }) as never as Parameters<typeof middleware>[0];
      const sent: Record<string, string> = {};
      const response = Object.assign(new EventEmitter(), { statusCode: status, setHeader: (name: string, value: string) => (sent[name] = value) });
      let nextCalled = false;
      middleware(request, response as never, () => (nextCalled = true));
      return { request: request as unknown as { id: string }, response, sent, nextCalled };
    };
    return { lines, serve };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('writes one line when the response is sent, with the id also set on the request and echoed, the masked URL, the status and the time', async () => {
    const { lines, serve } = harness();
    const served = serve('GET', '/api/transactions/5555555555554444', 200, { 'x-request-id': 'req-1' });
    expect(served.nextCalled).toBe(true);
    expect(lines).toEqual([]);
    served.response.emit('finish');
    served.response.emit('close');
    await settle();
    expect(served.request.id).toBe('req-1');
    expect(served.sent['X-Request-Id']).toBe('req-1');
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, req: { id: 'req-1', method: 'GET', url: '/api/transactions/[redacted]' }, res: { statusCode: 200 }, responseTime: expect.any(Number), msg: 'request completed' }),
    ]);
  });

  it('writes refusals at warn, failures at error, a connection closed before the answer too, and never the readiness probe', async () => {
    const { lines, serve } = harness();
    serve('POST', '/api/sales', 400).response.emit('finish');
    serve('GET', '/api/seller', 500).response.emit('finish');
    serve('GET', '/api/seller', 200).response.emit('close');
    serve('GET', '/health', 200).response.emit('finish');
    await settle();
    expect(lines.map((line) => [line.level, (line.req as { url: string }).url, line.msg])).toEqual([
      [40, '/api/sales', 'request completed'],
      [50, '/api/seller', 'request errored'],
      [30, '/api/seller', 'request completed'],
    ]);
  });

  it('takes the caller\'s X-Request-Id only when it holds nothing to mask', () => {
    const idOf = (given: string) => {
      const headers: Record<string, string> = {};
      const id = requestIdFor(mask)({ headers: { 'x-request-id': given } } as never, { setHeader: (name: string, value: string) => (headers[name] = value) } as never);
      return { id, echoed: headers['X-Request-Id'] };
    };
    expect(idOf('req-123_abc')).toEqual({ id: 'req-123_abc', echoed: 'req-123_abc' });
    for (const secret of ['4000000000000010', 'sk_Zk3v9Qm1AbCdEfGh', ADMIN_TOKEN]) expect(idOf(secret).id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the written line (issue 35, M4)', () => {
  it('holds none of the literal secrets it is given, in any field or message, and is unchanged without one', () => {
    const secret = '3f9c1a7e5b2d4c6e8a0b1c2d3e4f5a6b';
    const line = `{"paths":{"pix":"/psp/notifications/${secret}/pix"},"err":{"message":"PUT /webhook failed for https://gw.example/psp/notifications/${secret}"},"msg":"${secret}"}\n`;
    const masked = maskLiteralsInLine([secret, null, 'short'])(line);
    expect(masked).not.toContain(secret);
    expect(masked).toBe(line.split(secret).join('[redacted]'));
    expect(maskLiteralsInLine([null])(line)).toBe(line);
  });
});
