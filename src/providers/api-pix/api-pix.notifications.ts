import { NotificationSource, NotifiedObject } from '../notifications.port';
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

/** Efí's sends, notified on the same webhook (efi-pix-envio.md §3.3): the payout provider they are of. */
export interface SentPixNotices {
  provider: string;
}

const SEND_ID = /^[a-zA-Z0-9]{1,35}$/;

/**
 * What a /pix callback names: the end-to-end ids of Pix received (or returns), and, with Efí's sends
 * configured, the idEnvio of sent Pix (items `tipo` SOLICITACAO with `gnExtras.idEnvio`: the worker finds
 * the withdrawal that recorded it; one that names none is counted, and reconciliation lists a send the
 * gateway did not make). Null when the body is not a callback.
 */
export function notifiedPixObjects(body: unknown, sent: SentPixNotices | null): NotifiedObject[] | null {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { pix?: unknown }).pix)) return null;
  const items = (body as { pix: unknown[] }).pix;
  if (items.length > MAX_IDS_PER_NOTIFICATION) return null;
  const named: NotifiedObject[] = [];
  for (const item of items) {
    if (typeof item !== 'object' || item === null) return null;
    const { endToEndId, tipo, gnExtras } = item as { endToEndId?: unknown; tipo?: unknown; gnExtras?: { idEnvio?: unknown; erro?: unknown } };
    const extras = typeof gnExtras === 'object' && gnExtras !== null ? gnExtras : {};
    const sendId = extras.idEnvio;
    if (sent && tipo === 'SOLICITACAO' && typeof sendId === 'string') {
      if (!SEND_ID.test(sendId)) return null;
      const note = reasonOfFailedSend(extras.erro);
      named.push({ id: sendId, kind: 'payout', provider: sent.provider, ...(note ? { note } : {}) });
      continue;
    }
    if (typeof endToEndId !== 'string' || !END_TO_END_ID.test(endToEndId)) return null;
    named.push({ id: endToEndId });
  }
  return named;
}

/** A failed send's reason as Efí's callback gives it (`gnExtras.erro`: the SPI's code, where it failed, why), as one line of text. */
function reasonOfFailedSend(erro: unknown): string | null {
  if (typeof erro !== 'object' || erro === null) return null;
  const { codigo, origem, motivo } = erro as Record<string, unknown>;
  const parts = [codigo, motivo, origem].filter((part): part is string => typeof part === 'string' && part.trim() !== '').map((part) => [...part].map((c) => (c < ' ' ? ' ' : c)).join('').trim());
  return parts.length > 0 ? parts.join(': ').slice(0, 500) : null;
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
 * reached its final state: the end-to-end ids; with Efí's sends, the Pix sent: their references) and, with Pix Automático configured, /rec (recurrences)
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
    private readonly sent: SentPixNotices | null = null,
  ) {
    const base = new URL(webhookUrl).pathname.replace(/\/+$/, '');
    this.paths = [{ path: `${base}/pix`, kind: 'pix' }, ...(automaticPix ? [{ path: `${base}/rec`, kind: 'rec' }, { path: `${base}/cobr`, kind: 'cobr' }] : [])];
    this.secret = base.split('/').pop() ?? null;
    this.alsoNames = sent ? ['payout'] : [];
  }

  readonly secret: string | null;
  readonly alsoNames: readonly string[];

  parse(kind: string, body: unknown): NotifiedObject[] | null {
    if (kind === 'pix') return notifiedPixObjects(body, this.sent);
    const ids = kind === 'rec' || kind === 'cobr' ? notifiedAutomaticIds(kind, body) : null;
    return ids && ids.map((id) => ({ id }));
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
