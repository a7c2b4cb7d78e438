import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsDefined, IsIn, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { DISPUTE_SALE_EVENTS, DisputeSaleEvent } from '../../domain/sale-status';

/** Longest reason the operator may give (sale_status_changes.reason). */
export const DISPUTE_REASON_MAX_LENGTH = 500;

/** A dispute the operator records on a sale, reported out of band by its acquirer or PSP. */
export class DisputeEventDto {
  @ApiProperty({
    enum: DISPUTE_SALE_EVENTS,
    example: 'CHARGEBACK_OPENED',
    description: 'CHARGEBACK_* on a card sale, MED_* on a PIX sale; the move spec 3.1 allows from the sale’s status (409 INVALID_TRANSITION otherwise)',
  })
  @IsDefined()
  @IsIn(DISPUTE_SALE_EVENTS, { message: `event must be one of: ${DISPUTE_SALE_EVENTS.join(', ')}` })
  event: DisputeSaleEvent;

  @ApiProperty({
    example: 'Chargeback reported in the acquirer’s back office, case 123456',
    maxLength: DISPUTE_REASON_MAX_LENGTH,
    description: 'Why the operator records it (where it was reported, the case): kept on the sale’s status history and logged. Trimmed; blank is refused',
  })
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value))
  @IsDefined()
  @IsString({ message: 'reason must be a string' })
  @IsNotEmpty({ message: 'reason must not be blank' })
  @MaxLength(DISPUTE_REASON_MAX_LENGTH, { message: `reason must be at most ${DISPUTE_REASON_MAX_LENGTH} characters` })
  reason: string;
}
