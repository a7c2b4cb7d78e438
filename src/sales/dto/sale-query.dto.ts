import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { SALE_STATUSES, SaleStatus, SalePaymentMethod } from '../../domain/sale-status';
import { PageLimit, queryInteger } from '../../common/validation/query-integers';

const toInteger = queryInteger();
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
/** Text PostgreSQL can store: no NUL or other control characters, no lone surrogates. */
// eslint-disable-next-line no-control-regex
const PRINTABLE = /^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
export const SALE_PAYMENT_METHODS: readonly SalePaymentMethod[] = ['PIX', 'CREDIT_CARD', 'DEBIT_CARD', 'BOLETO', 'TRANSFER'];

/** The filters of a seller's list of sales (the dashboard's sales page). */
export class SaleQueryDto {
  @IsOptional()
  @Transform(emptyToUndefined)
  @IsIn(SALE_STATUSES, { message: `status must be one of: ${SALE_STATUSES.join(', ')}` })
  status?: SaleStatus;

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsIn(SALE_PAYMENT_METHODS, { message: `paymentMethod must be one of: ${SALE_PAYMENT_METHODS.join(', ')}` })
  paymentMethod?: SalePaymentMethod;

  /** Part of the customer's name, e-mail or document, or the sale's id. */
  @IsOptional()
  @Transform(emptyToUndefined)
  @IsString({ message: 'search must be a string' })
  @MaxLength(200, { message: 'search must be at most 200 characters' })
  @Matches(PRINTABLE, { message: 'search must not contain control characters' })
  search?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(DATE, { message: 'startDate must be a date YYYY-MM-DD' })
  startDate?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(DATE, { message: 'endDate must be a date YYYY-MM-DD' })
  endDate?: string;

  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'page must be an integer of at least 1' })
  @Min(1, { message: 'page must be an integer of at least 1' })
  @Max(1_000_000, { message: 'page must be at most 1000000' })
  page?: number;

  @PageLimit(100, 20)
  limit?: number;
}
