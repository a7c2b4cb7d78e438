import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { once } from 'node:events';
import { AddressInfo } from 'node:net';
import { deliveryViolation, pendingViolations } from './contract/contract';
import { standardWebhooksViolation } from './standard-webhooks';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
}

/**
 * A real local HTTP server standing for a seller's postback or webhook endpoint. It answers the
 * statuses queued with `failNext`/`answer`, 200 otherwise, and records what it received.
 */
export class Receiver {
  /** Requests answered 2xx: what the sender saw acknowledged. */
  readonly received: ReceivedRequest[] = [];
  /** Every request that arrived, whatever the answer and even if the sender died before it. */
  readonly arrived: ReceivedRequest[] = [];
  readonly answered: number[] = [];
  private readonly queued: number[] = [];
  private alwaysStatus: number | null = null;
  /** How long each answer waits, in milliseconds: a slow endpoint keeps deliveries in flight. */
  delayMs = 0;
  /** While true, answers due are held back instead of written (see `hold`). */
  private holding = false;
  private readonly held: Array<() => void> = [];
  private server: Server;
  url = '';

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await receiver.listen();
    return receiver;
  }

  private async listen(port = 0): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const status = this.queued.shift() ?? this.alwaysStatus ?? 200;
        this.answered.push(status);
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const received = { path: request.url ?? '', headers: request.headers, rawBody, body: JSON.parse(rawBody) };
        const violation = deliveryViolation(request.headers, received.body);
        if (violation) pendingViolations.push(violation);
        // Every signed postback verifies with the standardwebhooks library under a secret the suite was shown.
        if (request.headers['x-signature'] !== undefined) {
          const unverified = standardWebhooksViolation(request.headers, rawBody);
          if (unverified) pendingViolations.push(unverified);
        }
        this.arrived.push(received);
        const answer = () => {
          if (response.destroyed) return; // the sender went away before the answer: arrived, never acknowledged
          response.writeHead(status, { 'Content-Type': 'text/plain' }).end(String(status));
          if (status >= 200 && status < 300) this.received.push(received);
        };
        setTimeout(() => (this.holding ? this.held.push(answer) : answer()), this.delayMs);
      });
    });
    this.server.listen(port, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /**
   * Stops answering: every answer falls due is kept back, so what has arrived and is not in `received`
   * stays unacknowledged for as long as the hold lasts (a sender about to be killed never reads it).
   */
  hold(): void {
    this.holding = true;
  }

  /** Ends a hold. With `answerHeld` false, the answers kept back are never written (their senders are gone). */
  release(answerHeld: boolean): void {
    this.holding = false;
    const held = this.held.splice(0);
    if (answerHeld) for (const answer of held) answer();
  }

  /** The next `count` requests are answered `status` (and not recorded as received). */
  failNext(count: number, status = 500): void {
    for (let i = 0; i < count; i += 1) this.queued.push(status);
  }

  /** Every request is answered `status` until reset with null. */
  always(status: number | null): void {
    this.alwaysStatus = status;
  }

  /** Waits until `predicate` holds over what was received, or fails after `timeoutMs`. */
  async waitFor(predicate: (received: ReceivedRequest[]) => boolean, timeoutMs = 10_000, list: 'received' | 'arrived' = 'received'): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (predicate(this[list])) return this[list];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the receiver did not get what was expected within ${timeoutMs} ms; got ${this.received.length} requests`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
