import { ValidateBy, ValidationOptions } from 'class-validator';

/** A JSON value whose serialized form is at most `bytes` long. */
export function MaxJsonSize(bytes: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxJsonSize',
      validator: {
        validate: (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8') <= bytes,
        defaultMessage: (args) => `${args?.property} must be at most ${bytes} bytes of JSON`,
      },
    },
    options,
  );
}
