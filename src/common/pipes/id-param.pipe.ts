import { Injectable, PipeTransform } from '@nestjs/common';
import { DomainError } from '../../domain/domain-error';

const MAX_ID = 2_147_483_647;

/** A path id: a positive integer that fits the id columns, or 400 INVALID_ID. */
@Injectable()
export class IdParamPipe implements PipeTransform<string, number> {
  transform(value: string): number {
    const id = /^\d{1,10}$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(id) || id < 1 || id > MAX_ID) {
      throw new DomainError('INVALID_ID', `Invalid id "${String(value).slice(0, 40)}": it must be a positive integer`);
    }
    return id;
  }
}
