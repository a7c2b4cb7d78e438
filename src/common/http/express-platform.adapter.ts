import * as http from 'node:http';
import * as https from 'node:https';
import { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

type Constructor = new (...args: never[]) => object;

/** Interval of Node's sweep for requests whose headers or body take too long (configure-app.ts, HEADERS_TIMEOUT_MS). */
export const CONNECTIONS_CHECK_MS = 1_000;

/**
 * NestJS's Express adapter with one difference: the HTTP server builds each request and response with
 * Express's own prototypes (`app.request`, `app.response`) from the start, through Node's
 * `IncomingMessage` and `ServerResponse` server options.
 *
 * Express gives every request and response it handles those prototypes with `Object.setPrototypeOf`.
 * Changing the prototype of a live object costs V8 a new hidden class for it: every property read along
 * the request's path (Express, Nest, Node's own HTTP code) then misses its inline cache, and the
 * objects outlive the next young-generation collections, so each request leaves about 9 KB to the
 * old generation (measured with `--trace-gc-nvp`: none with node:http alone). On an object that already
 * has the prototype the call changes nothing. It took NestJS with one constant route from about 13,000
 * to 42,000 requests a second on 2 cores (issue 24's framework floor); Express's maintainers discuss the
 * same remedy in expressjs/express#5998. Sub-applications (none here) still get their prototypes set as before.
 */
export class ExpressPlatformAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    // Nest's connection tracking (forceCloseConnections) is private to its own server set-up.
    if (options?.forceCloseConnections) return super.initHttpServer(options);
    const app = this.getInstance<Express>();
    const classes = {
      IncomingMessage: withPrototype(http.IncomingMessage, app.request),
      ServerResponse: withPrototype(http.ServerResponse, app.response),
      // How often Node looks for requests over headersTimeout (HEADERS_TIMEOUT_MS); its default, 30 s, would triple it.
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    };
    this.httpServer = options?.httpsOptions ? https.createServer({ ...options.httpsOptions, ...classes }, app) : http.createServer(classes, app);
  }
}

/**
 * A constructor that builds what `base` builds, with `prototype` as the new object's prototype. Node's
 * IncomingMessage and ServerResponse are ES5 constructors, which build the object they are called on:
 * `new` allocates it with `prototype`, and `base` fills it in. (Reflect.construct with a new target
 * would work for a class too, but V8 takes its slow path there: Nest's framework floor served 9,000
 * requests a second that way, 40,000 this way.)
 */
function withPrototype<C extends Constructor>(base: C, prototype: object): C {
  function Constructed(this: object, ...args: unknown[]): void {
    (base as unknown as (...args: unknown[]) => void).apply(this, args);
  }
  Constructed.prototype = prototype;
  return Constructed as unknown as C;
}
