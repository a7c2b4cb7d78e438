import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { cnpj, cpf } from 'cpf-cnpj-validator';

/** A CPF (11 digits) or CNPJ (14 digits) with valid check digits, matching the sibling `type` field. */
export function IsTaxDocumentNumber(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isTaxDocumentNumber',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) => {
          const type = (args.object as { type?: string }).type;
          return type === 'cnpj'
            ? 'number must be a valid CNPJ: 14 digits with valid check digits'
            : 'number must be a valid CPF: 11 digits with valid check digits';
        },
        ...options,
      },
      validator: {
        validate(value: unknown, args: ValidationArguments) {
          if (typeof value !== 'string' || !/^\d+$/.test(value)) return false;
          const type = (args.object as { type?: string }).type;
          return type === 'cnpj' ? value.length === 14 && cnpj.isValid(value) : value.length === 11 && cpf.isValid(value);
        },
      },
    });
}
