import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AddressInfo, connect } from 'node:net';
import { answerViolation } from './setup/contract/contract';
import { createSeller, TestSeller } from './setup/factories';
import { ADMIN_TOKEN, startApp, TestApp } from './setup/test-app';

/**
 * Found by a review of issue 10: hostile requests the seeded fuzz of hostile-routes does not send (raw
 * sockets, compressed bodies, CONNECT, Expect), and secrets misplaced by a client that must not reach
 * the run's log. Each failed before its fix.
 */

interface RawAnswer {
  /** 0 when the connection closed without any answer. */
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `parts` on one TCP connection (a pause between them, so that they arrive as separate packets) and reads the answer. */
function rawRequest(port: number, parts: Array<string | Buffer>, pauseMs = 150): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 10 s')), 10_000);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const answer = parseAnswer(Buffer.concat(chunks).toString('latin1'));
      const violation = answer.status === 0 ? null : contractViolationOf(parts[0], answer);
      if (violation) reject(new Error(`answer off the spec's contract: ${violation}`));
      else resolve(answer);
    });
    socket.on('connect', async () => {
      for (const [index, part] of parts.entries()) {
        if (index > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
        socket.write(part);
      }
    });
  });
}

/** The contract check of every answer (setup/contract) for an answer read off a raw socket. */
function contractViolationOf(firstPart: string | Buffer, answer: RawAnswer): string | null {
  const [, method = 'GET', path = '/'] = /^([A-Z]+) (\/\S*)/.exec(firstPart.toString('latin1')) ?? [];
  let body: unknown = answer.body;
  try {
    body = JSON.parse(answer.body);
  } catch {
    // not JSON: answerViolation says whether it had to be
  }
  return answerViolation(method, path, answer.status, answer.headers['content-type'], body);
}

function parseAnswer(text: string): RawAnswer {
  if (text === '') return { status: 0, headers: {}, body: '' };
  const split = text.indexOf('\r\n\r\n');
  const [statusLine, ...headerLines] = text.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  let body = text.slice(split + 4);
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    for (let at = 0; ; ) {
      const end = body.indexOf('\r\n', at);
      const size = parseInt(body.slice(at, end), 16);
      if (!size) break;
      decoded += body.slice(end + 2, end + 2 + size);
      at = end + 2 + size + 2;
    }
    body = decoded;
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') };
}

/**
 * A random marker without digits: a UUID's digit groups can look like a card number grouped with dashes
 * (`…8-7994-4183-8371…`), which the log masks (1 marker in about 180), and the request's line would not be found.
 */
const markerId = (): string => randomUUID().replace(/[0-9]/g, (digit) => 'ghijklmnop'[Number(digit)]);

/** The request line with a marker added to its query string, to find its log line (the URL is logged, headers are not). */
const withMarker = (requestLine: string, marker: string): string => `${requestLine}${requestLine.includes('?') ? '&' : '?'}m=${marker}`;

/** The run's log lines (every app of the e2e run logs into LOG_FILE) holding `marker`, once they are there. */
async function logLinesWith(marker: string): Promise<string[]> {
  // The log is written asynchronously; on a loaded machine a line has been seen to take over 3 s.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const lines = readFileSync(process.env.LOG_FILE as string, 'utf8')
      .split('\n')
      .filter((line) => line.includes(marker));
    if (lines.length > 0 || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('Hostile requests outside the fuzz, and misplaced secrets kept out of the log', () => {
  let t: TestApp;
  let port: number;
  let seller: TestSeller;
  let auth: string;

  beforeAll(async () => {
    t = await startApp();
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    seller = await createSeller(t);
    auth = `X-Api-Public-Key: ${seller.publicKey}\r\nX-Api-Private-Key: ${seller.privateKey}\r\n`;
  }, 60_000);
  afterAll(() => t.close());

  const salesOfSeller = async (): Promise<number> => (await t.db.query('SELECT count(*)::int AS n FROM sales WHERE seller_id = $1', [seller.id]))[0].n;

  describe('answers', () => {
    // body-parser inflates gzip, deflate and br bodies; a stream that does not decompress is a zlib error that
    // body-parser wraps with createError(400, error) and no `type`, which toDomainError does not know: 500.
    it.each(['gzip', 'deflate', 'br'])('a %s body that does not decompress is a 4xx in the family shape, not a 500', async (encoding) => {
      const before = await salesOfSeller();
      const body = Buffer.from('this is not compressed');
      const sales = await rawRequest(port, [
        `POST /api/sales HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        body,
      ]);
      expect({ status: sales.status, body: JSON.parse(sales.body) }).toEqual({ status: 400, body: { message: expect.any(String), error: 'MALFORMED_JSON', details: { field: 'body', message: expect.any(String) } } });

      const subscriptions = await rawRequest(port, [
        `POST /api/subscriptions/1/cancel HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Encoding: ${encoding}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
        body,
      ]);
      expect(subscriptions.status).toBeLessThan(500);
      expect(JSON.parse(subscriptions.body)).toEqual({ success: false, error: { code: 'MALFORMED_JSON', message: expect.any(String), details: { field: 'body', message: expect.any(String) } } });
      expect(await salesOfSeller()).toBe(before);
    });

    // Over 16 KB the service refuses the request itself, knowing its path wherever its packets split. Only
    // over Node's parser limit (1 MB) is the path read from the packet that crossed it; when the request
    // line came in an earlier packet it is unknown there, and the answer takes the general shape.
    it('request line and headers over 16 KB: 431 JSON in the family shape, in one packet or two', async () => {
      const onePacket = await rawRequest(port, [`GET /api/subscriptions HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`]);
      expect({ status: onePacket.status, body: JSON.parse(onePacket.body) }).toEqual({ status: 431, body: { success: false, error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String) } } });
      const twoPackets = await rawRequest(port, [`GET /api/subscriptions HTTP/1.1\r\nHost: x\r\n`, `X-Filler: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`]);
      expect({ status: twoPackets.status, body: JSON.parse(twoPackets.body) }).toEqual({ status: 431, body: { success: false, error: { code: 'HEADERS_TOO_LARGE', message: expect.any(String) } } });
    });

    // Node hands CONNECT to the server's 'connect' event; with no listener it destroys the socket unanswered.
    it('CONNECT on an API path is answered with a JSON 4xx, not a connection closed without a reply', async () => {
      const answer = await rawRequest(port, [`CONNECT /api/sales HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`]);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(JSON.parse(answer.body)).toEqual({ message: expect.any(String), error: expect.any(String) });
    });

    // Node answers an Expect it does not know itself (writeHead(417).end()) unless 'checkExpectation' is handled.
    it('an Expect header other than 100-continue gets a JSON refusal in the family shape, not an empty 417', async () => {
      const answer = await rawRequest(port, [
        `POST /api/subscriptions/1/cancel HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nExpect: 200-ok\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
      ]);
      expect(answer.status).toBeLessThan(500);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(answer.body || 'null')).toEqual({ success: false, error: { code: expect.any(String), message: expect.any(String) } });
    });

    // The body parser and the shape check run as app.use() middleware before nestjs-pino's request logger
    // (a module middleware, registered later): what they refuse gets no request id and no log line.
    it('a request refused by the body parser or the shape check has its X-Request-Id and its log line', async () => {
      for (const [name, head, body] of [
        ['malformed', 'POST /api/public/cashout', '{'],
        ['nul-path', 'GET /api/transactions/%00', ''],
      ]) {
        const marker = `review-${name}-${markerId()}`;
        const answer = await rawRequest(port, [
          `${withMarker(head, marker)} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        ]);
        expect({ name, status: answer.status, requestId: answer.headers['x-request-id'] }).toEqual({ name, status: 400, requestId: expect.any(String) });
        expect(await logLinesWith(marker)).toHaveLength(1);
      }
    });
  });

  describe('the log', () => {
    /** Sends the request with a marker in its query string and returns its log lines (at least one: the check is not vacuous). */
    async function loggedLines(requestLine: string, extraHeaders = ''): Promise<string[]> {
      const marker = `review-${markerId()}`;
      await rawRequest(port, [`${withMarker(requestLine, marker)} HTTP/1.1\r\nHost: x\r\n${extraHeaders}Connection: close\r\n\r\n`]);
      const lines = await logLinesWith(marker);
      expect(lines.length).toBeGreaterThan(0);
      return lines;
    }

    // maskMisplacedSecrets masks url, query and headers, but pino's request serializer also writes req.params.
    it('a private key sent as a path id is masked everywhere in the log line, params included', async () => {
      const lines = await loggedLines(`GET /api/transactions/${seller.privateKey}`, auth);
      expect(lines.join('\n')).not.toContain(seller.privateKey);
    });

    // SECRET_SHAPE starts with \b, so a key right after a word character (`_`, a letter, a digit) is not
    // masked, and the raw url keeps a percent-encoded key; the teardown's scan has the same \b blind spot.
    it('a private key glued to a word character, or percent-encoded in the url, does not reach the log either', async () => {
      const secretPart = seller.privateKey.slice(3);
      expect((await loggedLines('GET /api/public/balance', `${auth}Idempotency-Key: order_${seller.privateKey}\r\n`)).join('\n')).not.toContain(secretPart);
      expect((await loggedLines(`GET /api/public/balance?token=%73k_${secretPart}`, auth)).join('\n')).not.toContain(secretPart);
    });

    // README (Logs): card data is redacted. A card number in the path or the query string is logged verbatim.
    it('a card number sent as a path id or in a query string does not reach the log', async () => {
      const card = '5555555555554444';
      expect((await loggedLines(`GET /api/transactions/${card}`, auth)).join('\n')).not.toContain(card);
      expect((await loggedLines(`GET /api/subscriptions?search=${card}`, auth)).join('\n')).not.toContain(card);
    });

    // requestIdFor accepts any 1-64 [A-Za-z0-9._-] value that is not sk_/whsec_-shaped: a card number becomes
    // the request id, echoed in X-Request-Id and written as req.id in every log line of the request.
    it('a card number sent as X-Request-Id is not taken as the request id, so it is neither echoed nor logged', async () => {
      const card = '4000000000000010';
      const marker = `review-${markerId()}`;
      const answer = await rawRequest(port, [`GET /api/public/balance?m=${marker} HTTP/1.1\r\nHost: x\r\n${auth}X-Request-Id: ${card}\r\nConnection: close\r\n\r\n`]);
      expect(answer.headers['x-request-id']).not.toBe(card);
      const lines = await logLinesWith(marker);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('\n')).not.toContain(card);
    });

    // Only sk_/whsec_ shapes are masked; the admin token has none, so a misplaced one is logged verbatim
    // (the swapped-header case the change fixes for private keys).
    it('the admin token sent in a query string or in X-Api-Public-Key does not reach the log', async () => {
      expect((await loggedLines(`GET /api/public/balance?token=${ADMIN_TOKEN}`, auth)).join('\n')).not.toContain(ADMIN_TOKEN);
      expect((await loggedLines('GET /api/public/balance', `X-Api-Public-Key: ${ADMIN_TOKEN}\r\nX-Api-Private-Key: x\r\n`)).join('\n')).not.toContain(ADMIN_TOKEN);
    });
  });
});
