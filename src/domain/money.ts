/**
 * Money inside the service is always an integer number of cents (`Cents`).
 * This file is the one place where reais (decimal strings or numbers at the API edges the spec
 * names: withdrawal amounts and subscription metrics) are turned into cents and back.
 */
declare const centsBrand: unique symbol;
export type Cents = number & { readonly [centsBrand]: 'Cents' };

/** Basis points: 1 bp = 0.01 %, 10_000 bp = 100 %. Percentages inside are always integer basis points. */
declare const bpsBrand: unique symbol;
export type BasisPoints = number & { readonly [bpsBrand]: 'BasisPoints' };

export class MoneyError extends Error {}

export function cents(value: number): Cents {
  if (!Number.isSafeInteger(value)) {
    throw new MoneyError(`${value} is not a whole number of cents`);
  }
  return value as Cents;
}

export function basisPoints(value: number): BasisPoints {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new MoneyError(`${value} is not a non-negative whole number of basis points`);
  }
  return value as BasisPoints;
}

export function addCents(...values: Cents[]): Cents {
  return cents(values.reduce((sum, v) => sum + v, 0));
}

export function subtractCents(a: Cents, b: Cents): Cents {
  return cents(a - b);
}

const REAIS_PATTERN = /^(-)?(\d+)(?:\.(\d{1,2}))?$/;

/**
 * Parses an amount in reais, as a number (150, 150.5) or a decimal string ("150.50"), into cents.
 * At most two decimal places are accepted: 1.005 is refused rather than rounded, so a client never
 * gets a different amount than it sent. Returns null for anything that is not such an amount.
 */
export function reaisToCents(value: unknown): Cents | null {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    // Shortest round-trip representation: 150.1 -> "150.1", 0.1 + 0.2 -> "0.30000000000000004" (refused).
    text = String(value);
    if (/e/i.test(text)) return null;
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return null;
  }
  const match = REAIS_PATTERN.exec(text);
  if (!match) return null;
  const [, sign, whole, fraction = ''] = match;
  const total = Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
  if (!Number.isSafeInteger(total)) return null;
  return cents(sign ? -total : total);
}

/** Cents as a reais decimal string with two places: 15050 -> "150.50", -5 -> "-0.05". */
export function centsToReaisString(value: Cents): string {
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  const whole = Math.floor(abs / 100);
  const fraction = String(abs % 100).padStart(2, '0');
  return `${sign}${whole}.${fraction}`;
}

/** Cents as a reais number with two decimals, for the edges that answer numbers (metrics). */
export function centsToReaisNumber(value: Cents): number {
  return Number(centsToReaisString(value));
}

/** Basis points as a percent number: 399 -> 3.99. */
export function basisPointsToPercent(value: BasisPoints): number {
  return Number(centsToReaisString(value as unknown as Cents));
}

/** A percent number with at most two decimals into basis points: 3.99 -> 399. Null when not such a number. */
export function percentToBasisPoints(value: unknown): BasisPoints | null {
  const parsed = reaisToCents(value);
  return parsed === null || parsed < 0 ? null : basisPoints(parsed);
}

/**
 * The share of an amount given in basis points, rounded half up to the cent
 * (the single rounding rule for every percentage fee): 1000 cents at 399 bp = 39.9 -> 40 cents.
 */
export function percentageOf(amount: Cents, rate: BasisPoints): Cents {
  if (amount < 0) throw new MoneyError('percentageOf needs a non-negative amount');
  return cents(Math.floor((amount * rate + 5_000) / 10_000));
}

/** Cents as Brazilian currency for people: 123456 -> "R$ 1.234,56", -5 -> "-R$ 0,05". */
export function centsToBrl(value: Cents): string {
  const [whole, fraction] = centsToReaisString(value).replace('-', '').split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${value < 0 ? '-' : ''}R$ ${grouped},${fraction}`;
}

/**
 * An amount typed by a person in a pt-BR form into cents: "150", "150,5", "1.234,56", "R$ 150,50" or
 * "150.50" (a dot followed by one or two digits at the end is a decimal point). Null when it is not one.
 */
export function brlInputToCents(text: unknown): Cents | null {
  if (typeof text !== 'string') return null;
  const bare = text.trim().replace(/^R\$\s*/i, '');
  if (!/^\d{1,3}(\.\d{3})*(,\d{1,2})?$|^\d+(,\d{1,2})?$|^\d+\.\d{1,2}$/.test(bare)) return null;
  const normalized = /^\d+\.\d{1,2}$/.test(bare) ? bare : bare.replace(/\./g, '').replace(',', '.');
  return reaisToCents(normalized);
}
