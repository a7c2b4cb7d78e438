import { ValidateIf } from 'class-validator';

/**
 * A field that may be left out, but not sent as null: a null is validated like any other value, so it is
 * refused (400 naming the field) instead of standing for the default that leaving it out means (a null
 * refund amount refunded the whole sale, issue 35 M1). IsOptional lets null through.
 */
export const IsOptionalNotNull = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);
