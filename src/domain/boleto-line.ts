import { Cents } from './money';

/**
 * A bank boleto's 44-digit barcode and 47-digit typeable line (FEBRABAN layout).
 *
 * Barcode: bank (3) · currency 9 (1) · general check digit (1) · due-date factor (4) · value in cents (10)
 * · free field (25). Typeable line: five fields — bank, currency and free[0..5) + mod-10 digit;
 * free[5..15) + mod-10 digit; free[15..25) + mod-10 digit; the general check digit; factor and value.
 */
export class BoletoLineError extends Error {}

export interface BoletoInput {
  /** Three-digit bank code. */
  bankCode: string;
  amountCents: Cents;
  /** Due date, YYYY-MM-DD. */
  dueDate: string;
  /** Our reference (the sale id), written in the free field. */
  reference: number;
}

const DAY_MS = 86_400_000;
const FACTOR_BASE = Date.UTC(1997, 9, 7); // factor 0
const MAX_VALUE_CENTS = 9_999_999_999;

/**
 * Days since 1997-10-07, kept in 1000..9999: the factor reached 9999 on 2025-02-21 and restarted at
 * 1000 on 2025-02-22 (FEBRABAN's rollover), and does so every 9000 days.
 */
export function dueDateFactor(dueDate: string): string {
  const days = Math.round((Date.parse(`${dueDate}T00:00:00Z`) - FACTOR_BASE) / DAY_MS);
  if (!Number.isFinite(days) || days < 1000) throw new BoletoLineError(`no due-date factor for ${dueDate}`);
  return String(((days - 1000) % 9000) + 1000);
}

/** Mod 10 check digit: weights 2, 1, 2, … from the right, digits of each product summed. */
export function mod10(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? product - 9 : product;
    weight = weight === 2 ? 1 : 2;
  }
  return String((10 - (sum % 10)) % 10);
}

/** Mod 11 general check digit of the barcode: weights 2..9 from the right; 0, 10 and 11 become 1. */
export function mod11(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const digit = 11 - (sum % 11);
  return digit === 0 || digit === 10 || digit === 11 ? '1' : String(digit);
}

export function buildBoletoBarcode(input: BoletoInput): string {
  if (!/^\d{3}$/.test(input.bankCode)) throw new BoletoLineError('the bank code must be three digits');
  if (!Number.isSafeInteger(input.amountCents) || input.amountCents <= 0 || input.amountCents > MAX_VALUE_CENTS) {
    throw new BoletoLineError('the value must be 1 to 9999999999 cents');
  }
  if (!Number.isSafeInteger(input.reference) || input.reference < 0) throw new BoletoLineError('the reference must be a whole number');
  const freeField = String(input.reference).padStart(25, '0');
  if (freeField.length > 25) throw new BoletoLineError('the reference does not fit the free field');
  const withoutCheck = `${input.bankCode}9${dueDateFactor(input.dueDate)}${String(input.amountCents).padStart(10, '0')}${freeField}`;
  return `${withoutCheck.slice(0, 4)}${mod11(withoutCheck)}${withoutCheck.slice(4)}`;
}

/** The 44-digit barcode as its 47-digit typeable line. */
export function barcodeToLine(barcode: string): string {
  if (!/^\d{44}$/.test(barcode)) throw new BoletoLineError('a barcode has 44 digits');
  const free = barcode.slice(19);
  const first = `${barcode.slice(0, 4)}${free.slice(0, 5)}`;
  const second = free.slice(5, 15);
  const third = free.slice(15, 25);
  return `${first}${mod10(first)}${second}${mod10(second)}${third}${mod10(third)}${barcode[4]}${barcode.slice(5, 19)}`;
}

/** The typeable line back into its barcode. */
export function lineToBarcode(line: string): string {
  if (!/^\d{47}$/.test(line)) throw new BoletoLineError('a typeable line has 47 digits');
  return `${line.slice(0, 4)}${line[32]}${line.slice(33, 47)}${line.slice(4, 9)}${line.slice(10, 20)}${line.slice(21, 31)}`;
}

export function buildBoletoLine(input: BoletoInput): string {
  return barcodeToLine(buildBoletoBarcode(input));
}
