import { timingSafeEqual } from 'node:crypto';
import { IncomingHttpHeaders } from 'node:http';
import { NotificationSource, NotifiedObject } from '../notifications.port';

/** The kind of object Cielo's notifications name: a payment by Cielo's own id (its PaymentId), settled by CardNotificationsService (src/payments). */
export const CARD_PAYMENT = 'card-payment';

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** The static header Cielo is configured to send with each notification (CIELO_NOTIFICATION_HEADER `Name: value`), when one is. */
export interface CieloNotificationHeader {
  name: string;
  value: string;
}

/**
 * The PaymentId a notification body names (ref §10: `{PaymentId, ChangeType, RecurrentPaymentId}`,
 * `ChangeType` a number or a numeric string), or null when the body is not one. The body says no state:
 * only the look-up of the payment moves anything.
 */
export function notifiedPaymentId(body: unknown): string | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { PaymentId, ChangeType, RecurrentPaymentId } = body as Record<string, unknown>;
  if (typeof PaymentId !== 'string' || !GUID.test(PaymentId)) return null;
  const changeType = typeof ChangeType === 'string' && /^[0-9]{1,3}$/.test(ChangeType) ? Number(ChangeType) : ChangeType;
  if (typeof changeType !== 'number' || !Number.isInteger(changeType) || changeType < 0 || changeType > 999) return null;
  if (RecurrentPaymentId !== undefined && RecurrentPaymentId !== null && (typeof RecurrentPaymentId !== 'string' || !GUID.test(RecurrentPaymentId))) return null;
  return PaymentId.toLowerCase();
}

/**
 * Cielo's notification post (ref §10) at CIELO_NOTIFICATION_URL's path (its last segment unguessable),
 * with the static header Cielo is configured to send checked when one is configured (CIELO_NOTIFICATION_HEADER:
 * a post without it is answered 401 and nothing is kept). The PaymentId is kept in the one intake before
 * the 200; the handler of `card-payment` then fetches the payment (`GET /1/sales/{PaymentId}`) and applies
 * only what Cielo shows. Cielo's URL is set in its site (E-commerce > Configurações > URL de
 * notificações), not through the API: nothing to register.
 */
export class CieloNotifications implements NotificationSource {
  readonly paths: ReadonlyArray<{ path: string; kind: string }>;
  readonly secret: string | null;

  constructor(
    notificationUrl: string,
    readonly inboxMax: number,
    private readonly header: CieloNotificationHeader | null,
  ) {
    const path = new URL(notificationUrl).pathname.replace(/\/+$/, '');
    this.paths = [{ path, kind: CARD_PAYMENT }];
    this.secret = path.split('/').pop() ?? null;
  }

  parse(kind: string, body: unknown): NotifiedObject[] | null {
    if (kind !== CARD_PAYMENT) return null;
    const paymentId = notifiedPaymentId(body);
    return paymentId === null ? null : [{ id: paymentId }];
  }

  expected(): { title: string; detail: string } {
    return { title: 'Not a Cielo notification', detail: 'Expected {"PaymentId": "<GUID>", "ChangeType": <number>}' };
  }

  /** Whether a post carries the configured header with its value (compared in constant time); true when none is configured. */
  authentic(headers: IncomingHttpHeaders): boolean {
    if (!this.header) return true;
    const sent = headers[this.header.name.toLowerCase()];
    if (typeof sent !== 'string') return false;
    const given = Buffer.from(sent);
    const expected = Buffer.from(this.header.value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
