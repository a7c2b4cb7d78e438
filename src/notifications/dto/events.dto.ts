import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsNumber, IsOptional, Matches, Max, Min } from 'class-validator';
import { IsOptionalNotNull } from '../../common/validation/is-optional-not-null';
import { PageLimit, queryInteger } from '../../common/validation/query-integers';

const toInteger = queryInteger(15);

export const EVENT_TYPES = [
  'transaction.status_changed',
  'refund.status_changed',
  'subscription.status_changed',
  'subscription.automatic_pix_changed',
  'withdrawal.status_changed',
] as const;
export const EVENT_OBJECT_TYPES = ['sale', 'subscription', 'withdrawal'] as const;
export const EVENT_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type EventDeliveryStatus = (typeof EVENT_DELIVERY_STATUSES)[number];
/** An ISO 8601 instant with its time and zone, as the events API reads and writes them. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;

/** GET /api/events: filters, newest first, a page at a time. */
export class EventsQueryDto {
  @ApiPropertyOptional({ enum: EVENT_TYPES })
  @IsOptional()
  @IsIn(EVENT_TYPES, { message: `type must be one of: ${EVENT_TYPES.join(', ')}` })
  type?: (typeof EVENT_TYPES)[number];

  @ApiPropertyOptional({ enum: EVENT_OBJECT_TYPES, description: 'What the event is about; required with objectId' })
  @IsOptional()
  @IsIn(EVENT_OBJECT_TYPES, { message: `objectType must be one of: ${EVENT_OBJECT_TYPES.join(', ')}` })
  objectType?: (typeof EVENT_OBJECT_TYPES)[number];

  @ApiPropertyOptional({ example: 42, description: 'The sale, subscription or withdrawal id (with objectType)' })
  @IsOptional()
  @Transform(toInteger)
  @IsInt({ message: 'objectId must be a positive integer' })
  @Min(1, { message: 'objectId must be a positive integer' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'objectId must be a positive integer' })
  objectId?: number;

  @ApiPropertyOptional({ example: '2026-11-01T00:00:00-03:00', description: 'Events created at or after this instant (ISO 8601 with its zone)' })
  @IsOptional()
  @Matches(INSTANT, { message: 'createdAfter must be an ISO 8601 instant with its zone, e.g. 2026-11-01T00:00:00-03:00' })
  @IsISO8601({ strict: true }, { message: 'createdAfter must be an ISO 8601 instant with its zone, e.g. 2026-11-01T00:00:00-03:00' })
  createdAfter?: string;

  @ApiPropertyOptional({ example: '2026-11-30T23:59:59-03:00', description: 'Events created before this instant (ISO 8601 with its zone)' })
  @IsOptional()
  @Matches(INSTANT, { message: 'createdBefore must be an ISO 8601 instant with its zone, e.g. 2026-11-30T23:59:59-03:00' })
  @IsISO8601({ strict: true }, { message: 'createdBefore must be an ISO 8601 instant with its zone, e.g. 2026-11-30T23:59:59-03:00' })
  createdBefore?: string;

  @ApiPropertyOptional({ enum: EVENT_DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(EVENT_DELIVERY_STATUSES, { message: `deliveryStatus must be one of: ${EVENT_DELIVERY_STATUSES.join(', ')}` })
  deliveryStatus?: EventDeliveryStatus;

  @PageLimit(100, 20)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @IsOptional()
  @Matches(/^[A-Za-z0-9_-]{1,24}$/, { message: 'cursor must be the nextCursor of a previous page' })
  cursor?: string;
}

/** POST /api/events/redeliver: every event whose latest try failed in [since, until). */
export class RedeliverFailedDto {
  @ApiProperty({ example: '2026-11-25T00:00:00-03:00', description: 'Events whose latest try failed at or after this instant; within OUTBOX_RETENTION_DAYS' })
  @Matches(INSTANT, { message: 'since must be an ISO 8601 instant with its zone, e.g. 2026-11-25T00:00:00-03:00' })
  @IsISO8601({ strict: true }, { message: 'since must be an ISO 8601 instant with its zone, e.g. 2026-11-25T00:00:00-03:00' })
  since: string;

  @ApiPropertyOptional({ example: '2026-11-26T00:00:00-03:00', description: 'Events whose latest try failed before this instant (default: now)' })
  @IsOptional()
  @Matches(INSTANT, { message: 'until must be an ISO 8601 instant with its zone, e.g. 2026-11-26T00:00:00-03:00' })
  @IsISO8601({ strict: true }, { message: 'until must be an ISO 8601 instant with its zone, e.g. 2026-11-26T00:00:00-03:00' })
  until?: string;
}

/** POST /api/events/secret/roll (and the operator's rotation). */
export class RollSecretDto {
  @ApiPropertyOptional({
    example: 24,
    default: 24,
    description: 'Hours the replaced secret keeps signing beside the new one, 0 to 168 (7 days); fractions of an hour allowed; 0 for a leaked secret',
  })
  @IsOptionalNotNull()
  @IsNumber({ allowNaN: false, allowInfinity: false, maxDecimalPlaces: 4 }, { message: 'overlapHours must be a number of hours, 0 to 168' })
  @Min(0, { message: 'overlapHours must be a number of hours, 0 to 168' })
  @Max(168, { message: 'overlapHours must be a number of hours, 0 to 168' })
  overlapHours?: number;
}

export class EventAttemptResponse {
  @ApiProperty({ example: '2026-11-26T14:00:00.000Z' }) attemptedAt: string;
  @ApiProperty({ type: Number, nullable: true, example: 200, description: 'null when no answer came' }) responseStatus: number | null;
  @ApiProperty({ type: String, nullable: true, example: null }) error: string | null;
  @ApiProperty({ example: 84 }) durationMs: number;
  @ApiProperty({
    type: Object,
    nullable: true,
    description: 'The headers the try sent: X-Event-Id, X-Signature and the Standard Webhooks headers',
    example: { 'webhook-id': '0b6c…', 'webhook-timestamp': '1795700000', 'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=' },
  })
  requestHeaders: Record<string, string> | null;
}

export class EventResponse {
  @ApiProperty({ example: '0b6c1f8e-5d2a-4b7e-9a51-3c2d1e0f9a8b', description: 'X-Event-Id and webhook-id of its deliveries' }) id: string;
  @ApiProperty({ enum: EVENT_TYPES }) type: string;
  @ApiProperty({ enum: EVENT_OBJECT_TYPES, nullable: true, type: String, description: 'null for a test webhook' }) objectType: string | null;
  @ApiProperty({ type: Number, nullable: true, example: 42 }) objectId: number | null;
  @ApiProperty({ type: Number, nullable: true, example: 3, description: "The event's place among its object's events (1, 2, …); null for withdrawal webhooks" })
  sequence: number | null;
  @ApiProperty({ example: '2026-11-26T14:00:00.000Z' }) createdAt: string;
  @ApiProperty({ example: 'https://loja.example/postbacks' }) url: string;
  @ApiProperty({ enum: EVENT_DELIVERY_STATUSES }) deliveryStatus: EventDeliveryStatus;
  @ApiProperty({ example: 1 }) attempts: number;
  @ApiProperty({ type: String, nullable: true, description: 'When the next try is due (pending only)' }) nextAttemptAt: string | null;
  @ApiProperty({ type: String, nullable: true }) deliveredAt: string | null;
  @ApiProperty({ type: String, nullable: true }) lastError: string | null;
  @ApiProperty({ type: Object, description: 'The body delivered, byte for byte once serialized' }) payload: Record<string, unknown>;
}

export class EventDetailResponse extends EventResponse {
  @ApiProperty({ type: EventAttemptResponse, isArray: true }) deliveryAttempts: EventAttemptResponse[];
}

export class EventPage {
  @ApiProperty({ type: EventResponse, isArray: true }) events: EventResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as cursor for the next page; null on the last page' }) nextCursor: string | null;
}

export class EventListResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: EventPage }) data: EventPage;
}

export class EventOneResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: EventDetailResponse }) data: EventDetailResponse;
}

export class RedeliveredPage {
  @ApiProperty({ example: 120, description: 'Events sent again now, each one of MANUAL_SENDS_PER_HOUR (at most 1000 a call and what is left of the hour)' }) requeued: number;
  @ApiProperty({ example: 0, description: 'Events of the period not sent again by this call (past 1000 or the hourly budget): call again to send them' }) remaining: number;
}

export class RedeliveredResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: RedeliveredPage }) data: RedeliveredPage;
}

export class EndpointResponse {
  @ApiProperty({ example: 'https://loja.example/postbacks' }) url: string;
  @ApiProperty({ enum: ['healthy', 'failing'] }) status: 'healthy' | 'failing';
  @ApiProperty({ type: String, nullable: true, description: 'When it was marked failing' }) failingSince: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'First failure since the last success' }) failuresSince: string | null;
  @ApiProperty({ type: String, nullable: true }) lastSuccessAt: string | null;
  @ApiProperty({ type: String, nullable: true }) lastFailureAt: string | null;
  @ApiProperty({ type: String, nullable: true }) lastError: string | null;
}

export class EndpointListResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: EndpointResponse, isArray: true }) data: EndpointResponse[];
}

export class SecretStateResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({
    type: Object,
    example: { previousSecretExpiresAt: '2026-11-27T14:00:00.000Z' },
    description: 'previousSecretExpiresAt: until when the replaced secret still signs; null when only the current one signs',
  })
  data: { previousSecretExpiresAt: string | null };
}

export class RolledSecret {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Signs every postback from now on; shown once' }) postbackSecret: string;
  @ApiProperty({ type: String, nullable: true, description: 'Until when the replaced secret still signs beside it; null: it stopped now' })
  previousSecretExpiresAt: string | null;
  @ApiProperty({ description: 'true when a secret still in an earlier roll’s window was expired by this roll (at most two sign at once)' })
  expiredEarlierSecret: boolean;
}

export class RolledSecretResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: RolledSecret }) data: RolledSecret;
}

export class ExpiredSecretResponse {
  @ApiProperty({ example: true }) success: true;
  @ApiProperty({ type: Object, example: { expired: true }, description: 'expired: whether a previous secret was still signing' }) data: { expired: boolean };
}
