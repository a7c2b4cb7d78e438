/**
 * Cards of Cielo's sandbox (cielo-ecommerce-3.0.md §3.2, §8.5, §8.6): the outcome by the card number's last
 * digit, the MPI test cards, the ECI table, and Luhn-valid numbers for a wanted last digit.
 */

export type CieloBrand = 'Visa' | 'Master' | 'Amex' | 'Elo' | 'Aura' | 'JCB' | 'Diners' | 'Discover' | 'Hipercard' | 'Hiper';

/** A sale's result as Cielo answers it: `Status` and the acquirer's `ReturnCode`/`ReturnMessage`. */
export interface CieloOutcome {
  status: 0 | 1 | 2 | 3 | 12 | 13;
  returnCode: string;
  returnMessage: string;
}

export const OPERATION_SUCCESSFUL = 'Operation Successful';

/** §3.2: authorized (1, code 4) or captured (2, code 6) by `Capture`. */
export function approvedOutcome(capture: boolean): CieloOutcome {
  return capture ? { status: 2, returnCode: '6', returnMessage: OPERATION_SUCCESSFUL } : { status: 1, returnCode: '4', returnMessage: OPERATION_SUCCESSFUL };
}

/** The denials of the sandbox table by last digit (§3.2); 6 is `Status` 3 by default (unconfirmed). */
export const SANDBOX_DENIALS: Record<string, { returnCode: string; returnMessage: string }> = {
  '2': { returnCode: '05', returnMessage: 'Não Autorizada' },
  '3': { returnCode: '57', returnMessage: 'Cartão Expirado' },
  '5': { returnCode: '78', returnMessage: 'Cartão Bloqueado' },
  '6': { returnCode: '99', returnMessage: 'Time Out' },
  '7': { returnCode: '77', returnMessage: 'Cartão Cancelado' },
  '8': { returnCode: '70', returnMessage: 'Problemas com o Cartão de Crédito' },
};

export function luhnValid(number: string): boolean {
  if (!/^[0-9]{12,19}$/.test(number)) return false;
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

const BRAND_PREFIX: Partial<Record<CieloBrand, string>> = { Visa: '4024007', Master: '5448280', Elo: '6362970', Amex: '3714496', Hipercard: '6062825', Diners: '3056930', JCB: '3566002' };

/**
 * A 16-digit (Amex, Diners: 15/14 are not needed here) Luhn-valid card number ending in `lastDigit`, for the
 * sandbox convention: the other digits are free (§3.2), Luhn is enforced when a card is saved. `seed` makes
 * distinct numbers.
 */
export function sandboxCard(lastDigit: number, brand: CieloBrand = 'Visa', seed = 0): string {
  const prefix = BRAND_PREFIX[brand] ?? '4024007';
  const middle = String(seed).padStart(7, '0').slice(-7);
  for (let adjust = 0; adjust < 10; adjust += 1) {
    const candidate = `${prefix}${middle}${adjust}${lastDigit}`;
    if (luhnValid(candidate)) return candidate;
  }
  throw new Error(`no Luhn-valid number ends in ${lastDigit}`);
}

/** Masked as the answers mask it (`455187******0183`, §2.3). */
export function maskPan(pan: string): string {
  return `${pan.slice(0, 6)}${'*'.repeat(Math.max(pan.length - 10, 0))}${pan.slice(-4)}`;
}

/** The MPI's outcome for a test card (§8.6): the browser script's event and the ECI it gives. */
export type MpiEvent = 'onSuccess' | 'onFailure' | 'onUnenrolled' | 'onError';

export const MPI_TEST_CARDS: Record<string, { brand: CieloBrand; event: MpiEvent; challenge: boolean }> = {
  '4000000000001091': { brand: 'Visa', event: 'onSuccess', challenge: true },
  '5200000000001096': { brand: 'Master', event: 'onSuccess', challenge: true },
  '6505290000001234': { brand: 'Elo', event: 'onSuccess', challenge: true },
  '4000000000001000': { brand: 'Visa', event: 'onSuccess', challenge: false },
  '5200000000001005': { brand: 'Master', event: 'onSuccess', challenge: false },
  '6505050000001000': { brand: 'Elo', event: 'onSuccess', challenge: false },
  '4000000000001109': { brand: 'Visa', event: 'onFailure', challenge: true },
  '5200000000001104': { brand: 'Master', event: 'onFailure', challenge: true },
  '6505050000001109': { brand: 'Elo', event: 'onFailure', challenge: true },
  '4000000000001018': { brand: 'Visa', event: 'onFailure', challenge: false },
  '5200000000001013': { brand: 'Master', event: 'onFailure', challenge: false },
  '6505050000001018': { brand: 'Elo', event: 'onFailure', challenge: false },
  '4000000000001117': { brand: 'Visa', event: 'onUnenrolled', challenge: true },
  '5200000000001112': { brand: 'Master', event: 'onUnenrolled', challenge: true },
  '6505050000001117': { brand: 'Elo', event: 'onUnenrolled', challenge: true },
  '4000000000001125': { brand: 'Visa', event: 'onError', challenge: true },
  '5200000000001120': { brand: 'Master', event: 'onError', challenge: true },
  '6505050000001125': { brand: 'Elo', event: 'onError', challenge: true },
};

/** §8.5: the ECI the issuer gives an authenticated card, and one it gives a failed authentication. */
export function authenticatedEci(brand: CieloBrand): string {
  return brand === 'Master' ? '02' : '05';
}

export function failedEci(brand: CieloBrand): string {
  return brand === 'Master' ? '00' : '07';
}

/** §8.5: whether an ECI means authenticated (by the issuer, or by the brand as an attempt) for `brand`. */
export function eciAuthenticated(brand: string, eci: string | number): boolean {
  const value = String(eci).padStart(2, '0');
  if (brand === 'Master') return value === '01' || value === '02';
  return value === '05' || value === '06';
}
