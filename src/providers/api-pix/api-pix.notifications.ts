import { NotificationSource } from '../notifications.port';
import { ApiPixAutomaticProvider } from './api-pix-automatic.provider';
import { ApiPixProvider } from './api-pix.provider';

/**
 * Most ids one notification may name (a PSP groups a few Pix, recurrences or charges per callback; a
 * larger body is not a PSP's and is refused 400, nothing kept): each id costs a look-up at the PSP.
 */
const MAX_IDS_PER_NOTIFICATION = 100;
const END_TO_END_ID = /^[a-zA-Z0-9]{32}$/;
const RECURRENCE_ID = /^[a-zA-Z0-9]{29}$/;
const RECURRING_TXID = /^[a-zA-Z0-9]{26,35}$/;

/** The end-to-end ids a notification body names (`{pix: [{endToEndId, …}]}`, the BCB's callback), or null when it is not one. */
export function notifiedEndToEndIds(body: unknown): string[] | null {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { pix?: unknown }).pix)) return null;
  const pix = (body as { pix: unknown[] }).pix;
  if (pix.length > MAX_IDS_PER_NOTIFICATION) return null;
  const ids = pix.map((item) => (typeof item === 'object' && item !== null ? (item as { endToEndId?: unknown }).endToEndId : undefined));
  return ids.every((id): id is string => typeof id === 'string' && END_TO_END_ID.test(id)) ? ids : null;
}

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
 * The API Pix PSP's notifications, at API_PIX_WEBHOOK_URL's path: /pix (Pix received, or a return that
 * reached its final state: the end-to-end ids) and, with Pix Automático configured, /rec (recurrences)
 * and /cobr (recurring charges). The webhooks are registered with the PSP (PUT /webhook/{chave},
 * /webhookrec, /webhookcobr). Mutual TLS with the PSP is the reverse proxy's (docs/going-live.md).
 */
export class ApiPixNotifications implements NotificationSource {
  readonly paths: ReadonlyArray<{ path: string; kind: string }>;

  constructor(
    private readonly webhookUrl: string,
    readonly inboxMax: number,
    private readonly pix: ApiPixProvider,
    private readonly automaticPix: ApiPixAutomaticProvider | null,
  ) {
    const base = new URL(webhookUrl).pathname.replace(/\/+$/, '');
    this.paths = [{ path: `${base}/pix`, kind: 'pix' }, ...(automaticPix ? [{ path: `${base}/rec`, kind: 'rec' }, { path: `${base}/cobr`, kind: 'cobr' }] : [])];
    this.secret = base.split('/').pop() ?? null;
  }

  readonly secret: string | null;

  parse(kind: string, body: unknown): string[] | null {
    if (kind === 'pix') return notifiedEndToEndIds(body);
    return kind === 'rec' || kind === 'cobr' ? notifiedAutomaticIds(kind, body) : null;
  }

  expected(kind: string): { title: string; detail: string } {
    if (kind === 'pix') return { title: 'Not a Pix notification', detail: 'Expected {"pix": [{"endToEndId": …}]}' };
    return { title: 'Not a Pix Automático notification', detail: `Expected ${kind === 'rec' ? '{"recs": [{"idRec": …}]}' : '{"cobsr": [{"txid": …}]}'}` };
  }

  async register(): Promise<void> {
    await this.pix.registerWebhook(this.webhookUrl);
    // Pix Automático's recurrences and recurring charges notify <webhookUrl>/rec and /cobr.
    if (this.automaticPix) await this.automaticPix.registerWebhooks(this.webhookUrl);
  }
}
