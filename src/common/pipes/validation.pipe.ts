import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { DomainError, FieldError, RequestValidationError } from '../../domain/domain-error';

/** Walks class-validator's error tree into field paths: customer.email, items[0].title. */
export function collectFieldErrors(errors: ValidationError[], parent = ''): { missing: string[]; invalid: FieldError[] } {
  const missing: string[] = [];
  const invalid: FieldError[] = [];
  for (const error of errors) {
    const path = /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.values(error.constraints ?? {});
    if (constraints.length > 0) {
      // Optional properties skip validation when absent, so a failure on an absent value means it is required.
      if (error.value === undefined || error.value === null) missing.push(path);
      else invalid.push({ field: path, message: constraints[0] });
    }
    if (error.children?.length) {
      const nested = collectFieldErrors(error.children, path);
      missing.push(...nested.missing);
      invalid.push(...nested.invalid);
    }
  }
  return { missing, invalid };
}

/**
 * The one validation pipe: strict types (no implicit conversion), unknown properties stripped,
 * every failure thrown as a RequestValidationError that each family filter renders in its shape.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      forbidUnknownValues: true,
      validationError: { target: false, value: true },
      exceptionFactory: (errors: ValidationError[]) => {
        const { missing, invalid } = collectFieldErrors(errors);
        return new RequestValidationError(missing, invalid);
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Path parameters are strings checked by their own pipe (IdParamPipe): converted here first, "abc"
    // reached it as NaN and its message quoted "NaN" instead of what the client sent.
    if (metadata.type === 'param') return value;
    if (metadata.type === 'body' && metadata.metatype && metadata.metatype !== Object) {
      if (value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0 && !Array.isArray(value))) {
        value = {};
      } else if (typeof value !== 'object' || Array.isArray(value)) {
        throw new DomainError('VALIDATION_ERROR', 'The request body must be a JSON object', { field: 'body' });
      }
    }
    return super.transform(value, metadata);
  }
}
