import { brazilDate } from '../../../../src/domain/dates';

const DAY_MS = 86_400_000;

/**
 * The PSP's time. Tests move the gateway through a simulated year by handing `now` to its scheduler, so the
 * PSP must live on the same calendar: `set(date)` makes "now" that instant, and time runs on from there at
 * the wall clock's pace (timestamps stay ordered). Every date rule of the simulator reads `today()`, the
 * Brazilian calendar day (UTC-3), as the API Pix dates are.
 */
export class Clock {
  private offsetMs = 0;

  constructor(start?: Date) {
    if (start) this.set(start);
  }

  /** Now is `date` from this call on; null goes back to the wall clock. */
  set(date: Date | null): void {
    this.offsetMs = date === null ? 0 : date.getTime() - Date.now();
  }

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  nowIso(): string {
    return this.now().toISOString();
  }

  /** Today in Brazil, YYYY-MM-DD. */
  today(): string {
    return brazilDate(this.now());
  }
}

/** `date` (YYYY-MM-DD) plus `days` calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `from` to `to` (both YYYY-MM-DD). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS);
}

/** The next business day from `date` on (weekends only: the simulator knows no holidays). */
export function businessDayFrom(date: string): string {
  let day = date;
  while ([0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay())) day = addDays(day, 1);
  return day;
}
