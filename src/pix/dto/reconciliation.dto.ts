import { ApiProperty } from '@nestjs/swagger';
import { IsISO8601 } from 'class-validator';

export class ReconciliationQueryDto {
  @ApiProperty({ example: '2026-11-25T00:00:00Z', description: 'Start of the period (ISO 8601, inclusive)' })
  @IsISO8601({ strict: true }, { message: 'from must be an ISO 8601 date-time' })
  from: string;

  @ApiProperty({ example: '2026-11-26T00:00:00Z', description: 'End of the period (ISO 8601, exclusive)' })
  @IsISO8601({ strict: true }, { message: 'to must be an ISO 8601 date-time' })
  to: string;
}

export class ReconciliationDifference {
  @ApiProperty({
    example: 'LATE',
    enum: ['UNMATCHED', 'LATE', 'AMOUNT_MISMATCH', 'DUPLICATE', 'NOT_BOOKED', 'NOT_AT_PSP', 'PSP_RETURN', 'SEND_UNKNOWN', 'PAYOUT_NOT_AT_PSP', 'PAYOUT_AMOUNT_MISMATCH', 'PAYOUT_STATUS_MISMATCH'],
    description:
      'UNMATCHED: a Pix for no sale; LATE: for a sale already cancelled or expired; AMOUNT_MISMATCH: another amount than charged; DUPLICATE: a sale already paid (all four are returned to the payer); ' +
      'NOT_BOOKED: at the PSP, not yet applied here; NOT_AT_PSP: a sale PAGO or reversed here whose Pix the PSP does not have (none named, unknown, or of another amount); ' +
      'PSP_RETURN: a return the PSP made on its own (a MED), booked against its sale (detail: its natureza and id at the PSP). ' +
      'Pix sent (payouts): SEND_UNKNOWN: a send the PSP lists that the gateway did not make; PAYOUT_NOT_AT_PSP: a withdrawal COMPLETED here that the PSP does not list as sent; ' +
      'PAYOUT_AMOUNT_MISMATCH: sent for another amount than the withdrawal’s net; PAYOUT_STATUS_MISMATCH: the PSP’s status and the withdrawal’s disagree',
  })
  kind:
    | 'UNMATCHED'
    | 'LATE'
    | 'AMOUNT_MISMATCH'
    | 'DUPLICATE'
    | 'NOT_BOOKED'
    | 'NOT_AT_PSP'
    | 'PSP_RETURN'
    | 'SEND_UNKNOWN'
    | 'PAYOUT_NOT_AT_PSP'
    | 'PAYOUT_AMOUNT_MISMATCH'
    | 'PAYOUT_STATUS_MISMATCH';
  @ApiProperty({ example: 'E12345678202611251300abcdefghijk', nullable: true, type: String, description: 'Null for a sale held as paid with no Pix named' }) endToEndId: string | null;
  @ApiProperty({ example: 'GWSALE00000000000000000345', nullable: true, type: String }) txid: string | null;
  @ApiProperty({ example: 345, nullable: true, type: Number }) saleId: number | null;
  @ApiProperty({ example: null, nullable: true, type: Number, description: 'The withdrawal, for the differences of Pix sent' }) withdrawalId: number | null;
  @ApiProperty({ example: 4990, description: 'Cents' }) amount: number;
  @ApiProperty({ example: 'DEVOLVIDO', nullable: true, enum: ['PENDING', 'DEVOLVIDO', 'NAO_REALIZADO'], description: 'The return to the payer, for the kinds that are returned' })
  returnStatus: 'PENDING' | 'DEVOLVIDO' | 'NAO_REALIZADO' | null;
  @ApiProperty({ example: null, nullable: true, type: String }) detail: string | null;
}

class PeriodTotal {
  @ApiProperty({ example: 12 }) count: number;
  @ApiProperty({ example: 59880, description: 'Cents' }) amount: number;
}

export class ReconciliationReport {
  @ApiProperty({ example: '2026-11-25T00:00:00.000Z' }) from: string;
  @ApiProperty({ example: '2026-11-26T00:00:00.000Z' }) to: string;
  @ApiProperty({ example: 'api-pix', enum: ['sandbox', 'api-pix'] }) provider: string;
  @ApiProperty({ type: PeriodTotal }) receivedAtPsp: PeriodTotal;
  @ApiProperty({ type: PeriodTotal }) bookedInGateway: PeriodTotal;
  @ApiProperty({ type: [ReconciliationDifference] }) differences: ReconciliationDifference[];
}
