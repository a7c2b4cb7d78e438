import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { SUBSCRIPTION_STATUSES } from '../../domain/subscription-status';
import { PageLimit, queryInteger } from '../../common/validation/query-integers';
import { IsOptionalNotNull } from '../../common/validation/is-optional-not-null';

const toInteger = queryInteger();
/** Text PostgreSQL can store: no NUL or other control characters, no lone surrogates. */
// eslint-disable-next-line no-control-regex
const PRINTABLE = /^(?:[^\u0000-\u001f\u007f\ud800-\udfff]|[\ud800-\udbff][\udc00-\udfff])*$/;
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/** GET /api/subscriptions (spec 4.7). */
export class SubscriptionQueryDto {
  @ApiPropertyOptional({ enum: SUBSCRIPTION_STATUSES })
  @IsOptional()
  @IsIn(SUBSCRIPTION_STATUSES, { message: `status must be one of: ${SUBSCRIPTION_STATUSES.join(', ')}` })
  status?: (typeof SUBSCRIPTION_STATUSES)[number];

  @ApiPropertyOptional({ description: 'Part of the customer e-mail or name', example: 'joao' })
  @IsOptional()
  @IsString({ message: 'search must be a string' })
  @MaxLength(200, { message: 'search must be at most 200 characters' })
  @Matches(PRINTABLE, { message: 'search must not contain control characters' })
  search?: string;

  @ApiPropertyOptional({ example: '2026-11-01', description: 'YYYY-MM-DD, Brazil time (UTC-3): created on or after that day' })
  @IsOptional()
  @Matches(DATE, { message: 'startDate must be a date YYYY-MM-DD' })
  startDate?: string;

  @ApiPropertyOptional({ example: '2026-11-30', description: 'YYYY-MM-DD, Brazil time (UTC-3): created on or before that day' })
  @IsOptional()
  @Matches(DATE, { message: 'endDate must be a date YYYY-MM-DD' })
  endDate?: string;

  @ApiPropertyOptional({ example: 1, default: 1 })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'page must be an integer of at least 1' })
  @Min(1, { message: 'page must be an integer of at least 1' })
  @Max(1_000_000, { message: 'page must be at most 1000000' })
  page?: number;

  @PageLimit(100, 20)
  limit?: number;

  @ApiPropertyOptional({ description: "The previous page's nextCursor (instead of page): the next page, at the cost of one page whatever its depth" })
  @IsOptional()
  @IsString({ message: 'cursor must be the nextCursor of a previous page' })
  @Matches(/^[A-Za-z0-9_-]{1,80}$/, { message: 'cursor must be the nextCursor of a previous page' })
  cursor?: string;
}

/** POST /api/subscriptions/{id}/cancel (spec 4.11); the body is optional. */
export class CancelSubscriptionDto {
  @ApiPropertyOptional({ example: 'Customer asked', description: 'Kept for the record' })
  @IsOptional()
  @IsString({ message: 'reason must be a string' })
  @MaxLength(500, { message: 'reason must be at most 500 characters' })
  @Matches(PRINTABLE, { message: 'reason must not contain control characters' })
  reason?: string;

  @ApiPropertyOptional({ example: true, default: true, description: 'false: cancel at the end of the current period' })
  @IsOptionalNotNull()
  @IsBoolean({ message: 'cancelImmediately must be true or false' })
  cancelImmediately?: boolean;
}
