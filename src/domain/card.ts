import creditCardType from 'credit-card-type';

/** Brand names as the API answers them (spec 2.2: "for example VISA"), from credit-card-type's types. */
const BRAND_NAMES: Record<string, string> = {
  visa: 'VISA',
  mastercard: 'MASTERCARD',
  elo: 'ELO',
  'american-express': 'AMEX',
  hipercard: 'HIPERCARD',
  hiper: 'HIPER',
  'diners-club': 'DINERS',
  discover: 'DISCOVER',
  jcb: 'JCB',
  unionpay: 'UNIONPAY',
  maestro: 'MAESTRO',
  mir: 'MIR',
};

/** Luhn (mod 10) check of a card number of 12 to 19 digits. */
export function isLuhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i += 1) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** The longest prefix any of credit-card-type's patterns reads (checked in card.spec.ts against the library). */
export const BRAND_PREFIX_DIGITS = 8;
/** Brands of the prefixes seen, up to this many (a card number's first 8 digits are its BIN, not secret). */
const MAX_CACHED_PREFIXES = 10_000;
const brandsByPrefix = new Map<string, string | null>();

/**
 * The card's brand from its number (BIN ranges of the maintained credit-card-type library), or null.
 * Where ranges overlap (ELO and Hipercard inside Discover's and Maestro's), the most specific wins,
 * which is the library's first match. The library's answer depends only on the number's first
 * BRAND_PREFIX_DIGITS digits, so it is kept per prefix: each call copies the library's whole table of
 * brands, about 3 % of a card sale's CPU (issue 24's profile).
 */
export function detectCardBrand(number: string): string | null {
  if (number.length < BRAND_PREFIX_DIGITS) return brandOf(number);
  const prefix = number.slice(0, BRAND_PREFIX_DIGITS);
  let brand = brandsByPrefix.get(prefix);
  if (brand === undefined) {
    brand = brandOf(prefix);
    if (brandsByPrefix.size >= MAX_CACHED_PREFIXES) brandsByPrefix.clear();
    brandsByPrefix.set(prefix, brand);
  }
  return brand;
}

function brandOf(digits: string): string | null {
  const [match] = creditCardType(digits);
  return match ? (BRAND_NAMES[match.type] ?? match.type.toUpperCase()) : null;
}
