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
