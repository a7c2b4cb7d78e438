import { randomBytes, randomInt, randomUUID } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The ISPB of the simulated receiving PSP: it stamps every return id (rtrId) it creates. */
const RECEIVER_ISPB = '99999999';

export function randomAlphanumeric(length: number): string {
  return Array.from(randomBytes(length), (byte) => ALPHANUMERIC[byte % ALPHANUMERIC.length]).join('');
}

/** A txid the receiver never created (26 to 35 letters and digits, as `TxId`). */
export function randomTxid(): string {
  return randomAlphanumeric(32);
}

/**
 * `<letter><ISPB><yyyyMMddHHmm><11 characters>`: the SPI's form for end-to-end ids ("E", stamped by the
 * payer's PSP) and return ids ("D", by the PSP returning). Both are 32 letters and digits, as the schemas say.
 */
function spiId(letter: 'E' | 'D', ispb: string, at: Date): string {
  const minute = at.toISOString().replace(/[-T:]/g, '').slice(0, 12);
  return `${letter}${ispb}${minute}${randomAlphanumeric(11)}`;
}

/** A payer's PSP is anyone: a random ISPB each time. */
export function endToEndId(at: Date): string {
  return spiId('E', String(randomInt(0, 100_000_000)).padStart(8, '0'), at);
}

export function returnId(at: Date): string {
  return spiId('D', RECEIVER_ISPB, at);
}

/**
 * A location as the document's examples write it: no scheme (the BR Code carries it so) and a capability
 * path the payer's PSP would fetch the charge's payload from.
 */
export function location(): string {
  return `pix.example.com/qr/v2/${randomUUID().replace(/-/g, '')}`;
}

export function accessToken(): string {
  return randomBytes(32).toString('base64url');
}
