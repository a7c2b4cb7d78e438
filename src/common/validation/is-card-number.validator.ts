import { ValidateBy, ValidationOptions } from 'class-validator';
import { isLuhnValid } from '../../domain/card';

/** 12 to 19 digits passing the Luhn check. */
export function IsCardNumber(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCardNumber',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && isLuhnValid(value),
        defaultMessage: () => 'number must be a card number of 12 to 19 digits that passes the Luhn check',
      },
    },
    options,
  );
}
