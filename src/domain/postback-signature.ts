import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

const SECRET_PREFIX = 'whsec_';
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A new postback secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newPostbackSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/**
 * The key of a postback secret as the Standard Webhooks specification reads it: the bytes after `whsec_`,
 * base64-decoded. Secrets issued before the standard was adopted are base64url (no padding); their bytes
 * are the same 32 random bytes, read with that alphabet (README, Notifications).
 */
export function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, STANDARD_BASE64.test(encoded) ? 'base64' : 'base64url');
}

/** `v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with the whole secret string (platform.md §5). */
function xSignatureV1(secret: string, rawBody: string, unixSeconds: number): string {
  return createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`).digest('hex');
}

/**
 * The X-Signature header of postbacks (platform.md §5): `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>" keyed with the seller's postbackSecret>`, with one `v1` per secret still valid (the
 * current one first; the previous one during a rotation's overlap).
 */
export function signatureHeader(secrets: string | string[], rawBody: string, unixSeconds: number): string {
  const keys = typeof secrets === 'string' ? [secrets] : secrets;
  return [`t=${unixSeconds}`, ...keys.map((secret) => `v1=${xSignatureV1(secret, rawBody, unixSeconds)}`)].join(',');
}

/**
 * Every signature header of a signed postback: X-Event-Id and X-Signature, and the Standard Webhooks
 * headers (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64> …`, one per secret) that the
 * maintained `standardwebhooks` libraries verify, signed by that library.
 */
export function postbackSignatureHeaders(secrets: string[], eventId: string, rawBody: string, unixSeconds: number): Record<string, string> {
  const timestamp = new Date(unixSeconds * 1000);
  return {
    'X-Event-Id': eventId,
    'X-Signature': signatureHeader(secrets, rawBody, unixSeconds),
    'webhook-id': eventId,
    'webhook-timestamp': String(unixSeconds),
    'webhook-signature': secrets.map((secret) => new Webhook(standardWebhooksKey(secret), { format: 'raw' }).sign(eventId, timestamp, rawBody)).join(' '),
  };
}

/** What a receiver does: checks that one `v1` is the HMAC under `secret` and that `t` is within `toleranceSeconds` of now. */
export function verifySignature(secret: string, rawBody: string, header: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = header.split(',').map((part) => part.split('=', 2) as [string, string | undefined]);
  const t = Number(parts.find(([name]) => name === 't')?.[1]);
  if (!Number.isSafeInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(xSignatureV1(secret, rawBody, t), 'hex');
  return parts
    .filter(([name, value]) => name === 'v1' && value)
    .some(([, value]) => {
      const given = Buffer.from(value as string, 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}
