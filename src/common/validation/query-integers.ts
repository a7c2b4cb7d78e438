import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

/**
 * A query-string integer as a number, when it is one of at most `maxDigits` digits; anything else is left
 * as it came, for the validators to refuse with the field's own message.
 */
export function queryInteger(maxDigits = 9): ({ value }: { value: unknown }) => unknown {
  const pattern = new RegExp(`^-?\\d{1,${maxDigits}}$`);
  return ({ value }) => (typeof value === 'string' && pattern.test(value) ? Number(value) : value);
}

/** The `limit` of a list route: optional, an integer from 1 to `max`, `defaultValue` when absent. */
export function PageLimit(max: number, defaultValue: number): PropertyDecorator {
  const message = `limit must be an integer from 1 to ${max}`;
  return applyDecorators(
    ApiPropertyOptional({ example: defaultValue, default: defaultValue }),
    IsOptional(),
    Transform(queryInteger()),
    IsInt({ message }),
    Min(1, { message }),
    Max(max, { message }),
  );
}
