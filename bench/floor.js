'use strict';
/**
 * The framework floor of the benchmark: one route, GET /floor, answering a constant JSON body (the size
 * of a balance answer), served either by a NestJS application on @nestjs/platform-express
 * (`node bench/floor.js nest`) or by node:http (`node bench/floor.js http`). The Nest app has one
 * controller and nothing else (no guard, pipe, interceptor, filter, middleware or logger of ours), with
 * what the service sets at no cost in src/configure-app.ts: its Express adapter (ExpressPlatformAdapter,
 * from the build: requests built with Express's prototypes), no body parser (the service parses JSON
 * itself), no X-Powered-By, no ETag. Measured side by side in the same run as the routes
 * (scenario `floor`), the difference between the two is what Nest and Express alone cost per request on
 * this machine: the part of each route's gap that is the framework's rather than ours.
 *
 * Env: PORT.
 */
const port = Number(process.env.PORT || 3103);
const BODY = { available: 987654321, blocked: 12345678, total: 999999999 };

async function nest() {
  require('reflect-metadata');
  const { Controller, Get, Module } = require('@nestjs/common');
  const { NestFactory } = require('@nestjs/core');
  const { ExpressPlatformAdapter } = require('../dist/src/common/http/express-platform.adapter');

  class FloorController {
    floor() {
      return BODY;
    }
  }
  Controller('floor')(FloorController);
  Get()(FloorController.prototype, 'floor', Object.getOwnPropertyDescriptor(FloorController.prototype, 'floor'));
  class FloorModule {}
  Module({ controllers: [FloorController] })(FloorModule);

  const app = await NestFactory.create(FloorModule, new ExpressPlatformAdapter(), { bodyParser: false, logger: ['error', 'warn'] });
  app.disable('x-powered-by');
  app.set('etag', false);
  app.getHttpServer().keepAliveTimeout = 65_000;
  app.enableShutdownHooks();
  await app.listen(port, '127.0.0.1');
}

function bare() {
  const http = require('node:http');
  const server = http.createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/floor') {
      const text = JSON.stringify(BODY);
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
      return response.end(text);
    }
    response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' });
    response.end('{"error":"NOT_FOUND"}');
  });
  server.keepAliveTimeout = 65_000;
  server.listen(port, '127.0.0.1');
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}

const mode = process.argv[2];
if (mode === 'nest') {
  nest().catch((error) => {
    console.error(error);
    process.exit(1);
  });
} else if (mode === 'http') {
  bare();
} else {
  console.error('usage: node bench/floor.js nest|http');
  process.exit(2);
}
