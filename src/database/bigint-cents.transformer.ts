import { ValueTransformer } from 'typeorm';
import { Cents, cents } from '../domain/money';

/** node-postgres returns bigint columns as strings; money columns come back as checked integer cents. */
export const centsTransformer: ValueTransformer = {
  to: (value: Cents | null | undefined) => value,
  from: (value: string | number | null): Cents | null => (value === null ? null : cents(Number(value))),
};

/**
 * A `date` column as its calendar date (YYYY-MM-DD): node-postgres reads a date as a Date at local
 * midnight, whose local fields are the date whatever the process's time zone.
 */
export const calendarDateTransformer: ValueTransformer = {
  to: (value: string | null | undefined) => value,
  from: (value: Date | string | null) => {
    if (value === null || typeof value === 'string') return value;
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${value.getFullYear()}-${pad(value.getMonth() + 1)}-${pad(value.getDate())}`;
  },
};
