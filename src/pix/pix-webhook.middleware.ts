import { Injectable, Logger, NestMiddleware } from '@nestjs/common';
import { NextFunction, Request, Response } from 'express';
import { AppConfig } from '../config/app-config';
import { AutomaticPixService } from '../payments/automatic-pix.service';
import { PixInboxWorker } from './pix.scheduler';
import { PixReceiptsService } from './pix-receipts.service';

/**
 * Most ids one notification may name (a PSP groups a few Pix, recurrences or charges per callback; a
 * larger body is not a PSP's and is refused 400, nothing kept): each id costs a look-up at the PSP.
 */
const MAX_IDS_PER_NOTIFICATION = 100;
const END_TO_END_ID = /^[a-zA-Z0-9]{32}$/;
/** Retry-After of a notification refused because its inbox is full. */
const INBOX_FULL_RETRY_AFTER_SECONDS = 60;

/** The end-to-end ids a notification body names (`{pix: [{endToEndId, …}]}`, the BCB's callback), or null when it is not one. */
export function notifiedEndToEndIds(body: unknown): string[] | null {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { pix?: unknown }).pix)) return null;
  const pix = (body as { pix: unknown[] }).pix;
  if (pix.length > MAX_IDS_PER_NOTIFICATION) return null;
  const ids = pix.map((item) => (typeof item === 'object' && item !== null ? (item as { endToEndId?: unknown }).endToEndId : undefined));
  return ids.every((id): id is string => typeof id === 'string' && END_TO_END_ID.test(id)) ? ids : null;
}

const RECURRENCE_ID = /^[a-zA-Z0-9]{29}$/;
const RECURRING_TXID = /^[a-zA-Z0-9]{26,35}$/;

/**
 * The ids a Pix Automático notification names: `{recs: [{idRec, …}]}` (POST <path>/rec) or
 * `{cobsr: [{txid, …}]}` (POST <path>/cobr), the BCB's callbacks; null when the body is not one.
 */
export function notifiedAutomaticIds(kind: 'rec' | 'cobr', body: unknown): string[] | null {
  const list = kind === 'rec' ? 'recs' : 'cobsr';
  const key = kind === 'rec' ? 'idRec' : 'txid';
  const pattern = kind === 'rec' ? RECURRENCE_ID : RECURRING_TXID;
  if (typeof body !== 'object' || body === null || !Array.isArray((body as Record<string, unknown>)[list])) return null;
  const items = (body as Record<string, unknown[]>)[list];
  if (items.length > MAX_IDS_PER_NOTIFICATION) return null;
  const ids = items.map((item) => (typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[key] : undefined));
  return ids.every((id): id is string => typeof id === 'string' && pattern.test(id)) ? ids : null;
}

/**
 * POST <API_PIX_WEBHOOK_URL's path>/pix: the PSP's notification of Pix received (or of a return that
 * reached its final state). The body is never trusted: only the end-to-end ids it names are kept, in
 * the inbox, before the 200; each is then fetched from the PSP (GET /pix/{e2eid}) and applied only as
 * the PSP reports it. A repeated notification finds the Pix already waiting or already applied.
 * Mutual TLS with the PSP is the reverse proxy's (README, Going live with a PSP); the unguessable path
 * keeps anyone else from knocking (it is masked in logs and metrics), and what one request can cost is
 * bounded: at most MAX_IDS_PER_NOTIFICATION ids, at most API_PIX_INBOX_MAX waiting per source (503 beyond).
 * /rec and /cobr are mounted only with Pix Automático configured (pix.module.ts).
 */
@Injectable()
export class PixWebhookMiddleware implements NestMiddleware {
  private readonly logger = new Logger(PixWebhookMiddleware.name);

  constructor(
    private readonly config: AppConfig,
    private readonly receipts: PixReceiptsService,
    private readonly worker: PixInboxWorker,
    private readonly automaticPix: AutomaticPixService,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    if (request.method !== 'POST') return next();
    const automatic = /\/(rec|cobr)\/?$/.exec(request.path)?.[1] as 'rec' | 'cobr' | undefined;
    if (automatic) return this.automaticNotification(automatic, request, response);
    const ids = notifiedEndToEndIds(request.body);
    if (ids === null) {
      response.status(400).json({ type: 'about:blank', title: 'Not a Pix notification', status: 400, detail: 'Expected {"pix": [{"endToEndId": …}]}' });
      return;
    }
    try {
      if (ids.length > 0 && !(await this.receipts.notified(ids, this.config.apiPix.inboxMax))) return this.inboxFull('pix', response);
    } catch (error) {
      // Not written: the PSP must send it again (it retries what is not answered 2xx).
      this.logger.error({ err: error }, 'Could not keep a PSP notification; answering 503 so that it is sent again');
      response.status(503).json({ type: 'about:blank', title: 'Try again later', status: 503 });
      return;
    }
    response.status(200).json({});
    this.worker.kick();
  }

  /**
   * The inbox of this source holds API_PIX_INBOX_MAX ids already (a flood of forged ids, or a PSP down for
   * long): nothing of the notification is kept, and the 503 makes the PSP send it again later.
   * Reconciliation (received Pix) and the polling jobs (Pix Automático) find meanwhile what it names.
   */
  private inboxFull(source: 'pix' | 'rec' | 'cobr', response: Response): void {
    this.logger.warn({ source }, 'The PSP notification inbox is full; answering 503 so that the notification is sent again');
    response.status(503).setHeader('Retry-After', String(INBOX_FULL_RETRY_AFTER_SECONDS));
    response.json({ type: 'about:blank', title: 'Try again later', status: 503, detail: 'Too many notifications waiting to be checked' });
  }

  /**
   * POST <path>/rec and <path>/cobr (Pix Automático), kept like /pix: the recurrence ids or recurring-charge
   * txids named are written to automatic_pix_inbox before the 200 (503 when they cannot be, so that the PSP
   * sends it again), then asked about at the PSP by the inbox worker and applied as it reports them; the
   * body is never trusted. The jobs still poll what a notification never sent would have told (pending
   * authorizations and open charges every minute, authorized recurrences every hour).
   */
  private async automaticNotification(kind: 'rec' | 'cobr', request: Request, response: Response): Promise<void> {
    const ids = notifiedAutomaticIds(kind, request.body);
    if (ids === null) {
      const shape = kind === 'rec' ? '{"recs": [{"idRec": …}]}' : '{"cobsr": [{"txid": …}]}';
      response.status(400).json({ type: 'about:blank', title: 'Not a Pix Automático notification', status: 400, detail: `Expected ${shape}` });
      return;
    }
    try {
      if (!(await this.automaticPix.notified(kind, ids, this.config.apiPix.inboxMax))) return this.inboxFull(kind, response);
    } catch (error) {
      this.logger.error({ err: error, kind }, 'Could not keep a Pix Automático notification; answering 503 so that it is sent again');
      response.status(503).json({ type: 'about:blank', title: 'Try again later', status: 503 });
      return;
    }
    response.status(200).json({});
    this.worker.kick();
  }
}
