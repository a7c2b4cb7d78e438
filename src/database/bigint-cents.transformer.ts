import { ValueTransformer } from 'typeorm';
import { Cents, cents } from '../domain/money';

/** node-postgres returns bigint columns as strings; money columns come back as checked integer cents. */
export const centsTransformer: ValueTransformer = {
  to: (value: Cents | null | undefined) => value,
  from: (value: string | number | null): Cents | null => (value === null ? null : cents(Number(value))),
};
