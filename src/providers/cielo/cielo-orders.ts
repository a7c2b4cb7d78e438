import { CieloClient } from './cielo.client';

/** Cielo's MerchantOrderId of one of our references, and back (ref §2.1: at most 20 letters and digits). */
export function cieloOrderId(prefix: string, reference: string): string {
  return `${prefix}${reference}`;
}

/** Our reference (a sale's id) in a MerchantOrderId made by cieloOrderId, or null when it is none of this gateway's. */
export function referenceOfCieloOrder(prefix: string, orderId: string | undefined): string | null {
  const id = orderId ?? '';
  return id.startsWith(prefix) && /^[1-9][0-9]{0,9}$/.test(id.slice(prefix.length)) ? id.slice(prefix.length) : null;
}

/** A PaymentId as Cielo makes them (a GUID): anything else is never sent to its look-up. */
export function isCieloPaymentId(value: string): boolean {
  return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value);
}

/** Cielo's error list (ref §1.4): an array of `{Code, Message}`, or a single one. */
export type CieloErrors = Array<{ Code?: number | string; Message?: string }> | { Code?: number | string; Message?: string };

/** The first error of Cielo's error list, or null when the body holds none. */
export function firstCieloError(body: unknown): { Code?: number | string; Message?: string } | null {
  if (!body || typeof body !== 'object') return null;
  const errors = body as CieloErrors;
  return Array.isArray(errors) ? (errors[0] ?? null) : errors;
}

/**
 * What Cielo holds under one of our MerchantOrderIds (ref §5): the look-up by MerchantOrderId on the query host,
 * then each PaymentId it lists fetched (one not shown yet, or of another order, left out). `listed`: how many it
 * listed (0 also when the look-up is 404). Errors of the look-ups are thrown (CieloUnavailableError).
 */
export async function salesUnderOrder<S extends { MerchantOrderId?: string }>(client: CieloClient, orderId: string): Promise<{ listed: number; sales: Array<{ paymentId: string; sale: S }> }> {
  const listed = await client.query(`/1/sales?merchantOrderId=${encodeURIComponent(orderId)}`);
  if (listed.status === 404) return { listed: 0, sales: [] };
  const body = (listed.body ?? {}) as { Payments?: Array<{ PaymentId?: string }>; Payment?: Array<{ PaymentId?: string }> };
  const ids = [...new Set((body.Payments ?? body.Payment ?? []).map((one) => one.PaymentId).filter((id): id is string => typeof id === 'string'))];
  const sales: Array<{ paymentId: string; sale: S }> = [];
  for (const id of ids) {
    const found = await client.query(`/1/sales/${encodeURIComponent(id)}`);
    if (found.status === 404 || !found.body) continue;
    const sale = found.body as S;
    if (sale.MerchantOrderId !== undefined && sale.MerchantOrderId !== orderId) continue;
    sales.push({ paymentId: id, sale });
  }
  return { listed: ids.length, sales };
}
