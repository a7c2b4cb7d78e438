/**
 * Calendar rules. Brazil's official time has been UTC-3 all year since 2019 (no daylight saving), so a
 * Brazilian calendar day runs from 03:00 UTC to 03:00 UTC the next day.
 */
const BRAZIL_OFFSET_MS = 3 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export function addDays(from: Date, days: number): Date {
  return new Date(from.getTime() + days * DAY_MS);
}

/** The date (YYYY-MM-DD) of an instant in Brazil (UTC-3). */
export function brazilDate(instant: Date): string {
  return new Date(instant.getTime() - BRAZIL_OFFSET_MS).toISOString().slice(0, 10);
}

/** The instant a Brazilian calendar day (YYYY-MM-DD) ends: 00:00 of the next day in UTC-3. */
export function endOfBrazilDay(date: string): Date {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + DAY_MS + BRAZIL_OFFSET_MS);
}

/** A boleto issued at `issuedAt` is due `days` later (Brazilian date) and expires when that day ends. */
export function boletoDueDate(issuedAt: Date, days: number): { dueDate: string; expiresAt: Date } {
  const dueDate = brazilDate(addDays(issuedAt, days));
  return { dueDate, expiresAt: endOfBrazilDay(dueDate) };
}

/** A calendar date (YYYY-MM-DD) `days` later (or earlier, when negative). */
export function addDaysToDate(date: string, days: number): string {
  return new Date(Date.parse(`${date}T12:00:00.000Z`) + days * DAY_MS).toISOString().slice(0, 10);
}
