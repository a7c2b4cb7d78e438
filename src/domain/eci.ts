/**
 * What a 3-D Secure ECI (Electronic Commerce Indicator) means for a card's brand
 * (../shared/reference/cielo-ecommerce-3.0.md §8.5): authenticated by the issuer, authenticated by the
 * brand (an attempt or stand-in: the issuer still bears the liability), Data Only, or not authenticated.
 * Online debit in Brazil must be authenticated (§8.1): a debit sale goes to the acquirer only with an ECI
 * of the first two kinds.
 */
export type EciMeaning = 'AUTHENTICATED' | 'ATTEMPTED' | 'DATA_ONLY' | 'NOT_AUTHENTICATED';

/** The brands 3-D Secure 2.2 runs for at Cielo's MPI (§8.1), as detectCardBrand names them, and their ECIs. */
const ECI_TABLE: Record<string, { authenticated: string; attempted: string; dataOnly: string | null }> = {
  MASTERCARD: { authenticated: '02', attempted: '01', dataOnly: '04' },
  MAESTRO: { authenticated: '02', attempted: '01', dataOnly: '04' },
  VISA: { authenticated: '05', attempted: '06', dataOnly: '07' },
  ELO: { authenticated: '05', attempted: '06', dataOnly: null },
  AMEX: { authenticated: '05', attempted: '06', dataOnly: null },
};

/** The brands 3-D Secure is offered for. */
export const THREE_DS_BRANDS = Object.keys(ECI_TABLE);

/** An ECI as the MPI's script gives it ("5", "05"), as two digits; null when it is not one or two digits. */
export function normalizeEci(eci: string): string | null {
  return /^[0-9]{1,2}$/.test(eci) ? eci.padStart(2, '0') : null;
}

/** The meaning of `eci` for `brand`; null when 3-D Secure is not offered for the brand (or it is unknown). */
export function eciMeaning(brand: string | null, eci: string): EciMeaning | null {
  const row = brand === null ? undefined : ECI_TABLE[brand];
  if (!row) return null;
  const code = normalizeEci(eci);
  if (code === row.authenticated) return 'AUTHENTICATED';
  if (code === row.attempted) return 'ATTEMPTED';
  if (code !== null && code === row.dataOnly) return 'DATA_ONLY';
  return 'NOT_AUTHENTICATED';
}

/** Whether `eci` says the cardholder was authenticated (by the issuer, or by the brand on its behalf). */
export function isAuthenticatedEci(brand: string | null, eci: string): boolean {
  const meaning = eciMeaning(brand, eci);
  return meaning === 'AUTHENTICATED' || meaning === 'ATTEMPTED';
}
