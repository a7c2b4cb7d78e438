import { Transform } from 'class-transformer';
import { IsIn, IsOptional, Matches } from 'class-validator';
import { EVENT_DELIVERY_STATUSES, EVENT_TYPES, EventDeliveryStatus } from '../notifications/dto/events.dto';

const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);
const toInteger = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,3}$/.test(value) ? Number(value) : value);
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
export const DELIVERIES_PAGE_SIZES = [25, 50] as const;

/** The filters of the dashboard's deliveries page: dates are Brazilian days (UTC-3), both inclusive, like the sales page. */
export class DeliveriesFilterDto {
  @IsOptional()
  @Transform(emptyToUndefined)
  @IsIn(EVENT_TYPES, { message: `type must be one of: ${EVENT_TYPES.join(', ')}` })
  type?: (typeof EVENT_TYPES)[number];

  @IsOptional()
  @Transform(emptyToUndefined)
  @IsIn(EVENT_DELIVERY_STATUSES, { message: `deliveryStatus must be one of: ${EVENT_DELIVERY_STATUSES.join(', ')}` })
  deliveryStatus?: EventDeliveryStatus;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(DATE, { message: 'from must be a date YYYY-MM-DD' })
  from?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(DATE, { message: 'to must be a date YYYY-MM-DD' })
  to?: string;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Transform(toInteger)
  @IsIn(DELIVERIES_PAGE_SIZES, { message: `limit must be one of: ${DELIVERIES_PAGE_SIZES.join(', ')}` })
  limit?: number;

  @IsOptional()
  @Transform(emptyToUndefined)
  @Matches(/^[A-Za-z0-9_-]{1,24}$/, { message: 'cursor must be the link of a previous page' })
  cursor?: string;
}
