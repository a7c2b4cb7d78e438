import { IncomingMessage, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { startApp, TestApp } from './setup/test-app';

/**
 * Express gives every request and response it handles its own prototypes (app.request, app.response)
 * with Object.setPrototypeOf, which V8 pays for on every request (issue 24: a third of a balance read's
 * CPU). The server builds them with those prototypes already (ExpressPlatformAdapter), so that the call
 * changes nothing. Checked on what the server hands to its listeners before Express sees it.
 */
describe('HTTP server', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp();
  });

  afterAll(() => t.close());

  it("builds each request and response with Express's prototypes before Express handles them", async () => {
    const express = t.app.getHttpAdapter().getInstance() as Express;
    const server = t.app.getHttpServer();
    const seen: Array<{ request: IncomingMessage; response: ServerResponse; prototypes: [object, object] }> = [];
    const listener = (request: IncomingMessage, response: ServerResponse): void => {
      seen.push({ request, response, prototypes: [Object.getPrototypeOf(request) as object, Object.getPrototypeOf(response) as object] });
    };
    server.prependListener('request', listener);
    try {
      const answer = await t.http.get('/health/live').set('X-Request-Id', 'proto-check-1');
      expect(answer.status).toBe(200);
      expect(answer.headers['x-request-id']).toBe('proto-check-1');
    } finally {
      server.removeListener('request', listener);
    }
    expect(seen).toHaveLength(1);
    const [{ request, response, prototypes }] = seen;
    expect(prototypes[0]).toBe(express.request);
    expect(prototypes[1]).toBe(express.response);
    // Still Node's objects, with Express's methods, after Express handled them.
    expect(request).toBeInstanceOf(IncomingMessage);
    expect(response).toBeInstanceOf(ServerResponse);
    expect(Object.getPrototypeOf(request)).toBe(express.request);
    expect(typeof (request as unknown as { get: unknown }).get).toBe('function');
  });

  it('serves the API through it: a request with a JSON body, refused in its family shape', async () => {
    const answer = await t.http.post('/api/sales').set('content-type', 'application/json').send('{"amount":');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'MALFORMED_JSON' });
  });
});
