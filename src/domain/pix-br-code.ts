import { Cents, centsToReaisString } from './money';

/**
 * The PIX "copy and paste" BR Code: EMV QRCPS merchant-presented format as the Central Bank's BR Code
 * manual sets it. Each field is ID (2 digits) + length (2 digits) + value; the last one (63) is the
 * CRC16-CCITT of everything before it, its own "6304" included.
 */
export class PixCodeError extends Error {}

export interface PixCodeInput {
  /** The receiver's PIX key (e-mail, phone, CPF/CNPJ or random key), 1 to 77 characters. */
  key: string;
  amountCents: Cents;
  /** Written as at most 25 ASCII characters. */
  merchantName: string;
  /** Written as at most 15 ASCII characters. */
  merchantCity: string;
  /** Reference of the charge: at most 25 letters and digits. */
  txid: string;
}

const GUI = 'br.gov.bcb.pix';

function field(id: string, value: string): string {
  if (value.length > 99) throw new PixCodeError(`field ${id} is longer than 99 characters`);
  return `${id}${String(value.length).padStart(2, '0')}${value}`;
}

/** Upper-case ASCII without accents, at most `max` characters: "São Paulo" → "SAO PAULO". */
export function asciiField(text: string, max: number): string {
  const ascii = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7E]/g, '')
    .trim()
    .toUpperCase();
  return ascii.slice(0, max).trim();
}

/** CRC16-CCITT (polynomial 0x1021, initial 0xFFFF), as four upper-case hex digits. */
export function crc16(payload: string): string {
  let crc = 0xffff;
  for (let i = 0; i < payload.length; i += 1) {
    crc ^= payload.charCodeAt(i) << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

export function buildPixBrCode(input: PixCodeInput): string {
  if (input.key.length < 1 || input.key.length > 77) throw new PixCodeError('the PIX key must be 1 to 77 characters');
  if (input.amountCents <= 0) throw new PixCodeError('the amount must be positive');
  const txid = input.txid.replace(/[^A-Za-z0-9]/g, '').slice(0, 25);
  if (!txid) throw new PixCodeError('the txid must hold letters or digits');
  const name = asciiField(input.merchantName, 25) || 'RECEBEDOR';
  const city = asciiField(input.merchantCity, 15) || 'BRASIL';
  const payload = [
    field('00', '01'), // payload format indicator
    field('01', '12'), // point of initiation: 12 = a code for one payment
    field('26', field('00', GUI) + field('01', input.key)), // merchant account information: PIX
    field('52', '0000'), // merchant category code
    field('53', '986'), // currency: BRL
    field('54', centsToReaisString(input.amountCents)), // amount
    field('58', 'BR'),
    field('59', name),
    field('60', city),
    field('62', field('05', txid)), // additional data: txid
  ].join('');
  const withCrcHeader = `${payload}6304`;
  return `${withCrcHeader}${crc16(withCrcHeader)}`;
}
