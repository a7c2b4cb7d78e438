import { randomBytes, randomInt, randomUUID } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** The ISPB of the simulated receiving PSP: it stamps every return id (rtrId) and recurrence id (idRec) it creates. */
export const RECEIVER_ISPB = '99999999';

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

/** A payer's PSP is anyone (a random ISPB each time) unless `ispb` names it. */
export function endToEndId(at: Date, ispb: string = randomIspb()): string {
  return spiId('E', ispb, at);
}

export function randomIspb(): string {
  return String(randomInt(0, 100_000_000)).padStart(8, '0');
}

/**
 * `R<A><ISPB><yyyyMMdd><11 characters>` (RecId): "R", then "R" when the recurrence allows retries after the
 * due date or "N" when not, the ISPB of the PSP that made it, its creation date and 11 letters and digits.
 */
export function recurrenceId(allowsRetries: boolean, createdOn: string): string {
  return `R${allowsRetries ? 'R' : 'N'}${RECEIVER_ISPB}${createdOn.replace(/-/g, '')}${randomAlphanumeric(11)}`;
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

/** The location of a recurrence's payload, as `payloadLocationRecResponse2` writes it. */
export function recurrenceLocation(): string {
  return `pix.example.com/qr/v2/rec/${randomUUID().replace(/-/g, '')}`;
}

export function accessToken(): string {
  return randomBytes(32).toString('base64url');
}
