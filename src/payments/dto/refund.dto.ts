import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { IsOptionalNotNull } from '../../common/validation/is-optional-not-null';

export class CreateRefundDto {
  @ApiPropertyOptional({ example: 1500, description: 'Cents to refund; absent: all that is left of the sale' })
  @IsOptionalNotNull()
  @IsInt({ message: 'amount must be a whole number of cents' })
  @Min(1, { message: 'amount must be at least 1 cent' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'amount is too large' })
  amount?: number;
}

export class RefundResponse {
  @ApiProperty({ example: 12 }) id: number;
  @ApiProperty({ example: 345 }) saleId: number;
  @ApiProperty({ example: 1500, description: 'Cents given back to the customer' }) amount: number;
  @ApiProperty({ example: 'PENDING', enum: ['PENDING', 'COMPLETED', 'FAILED'], description: 'PENDING until the provider confirms (a PIX return can take minutes); FAILED gives the money back to the balance' })
  status: 'PENDING' | 'COMPLETED' | 'FAILED';
  @ApiProperty({ example: null, nullable: true, type: String, description: 'Why the provider did not make it' }) failureReason: string | null;
  @ApiProperty({
    example: 'SELLER',
    enum: ['SELLER', 'PSP'],
    description: 'SELLER: asked through this API. PSP: a return the PSP made on its own (a MED), booked as soon as the PSP reports it: the seller loses what was credited for that part, fees are not returned',
  })
  initiatedBy: 'SELLER' | 'PSP';
  @ApiProperty({ example: null, nullable: true, type: String, description: "A PSP's return: its natureza at the PSP (MED_OPERACIONAL, MED_FRAUDE, …), or ACQUIRER_VOID for a refund a card acquirer made in its back office; null for the seller's refunds" })
  nature: string | null;
  @ApiProperty({ example: '2026-11-25T13:00:05.123Z' }) createdAt: string;
  @ApiProperty({ example: null, nullable: true, type: String }) completedAt: string | null;
}

export class RefundListResponse {
  @ApiProperty({ type: [RefundResponse] }) refunds: RefundResponse[];
  @ApiProperty({ example: 1500, description: 'Cents refunded or being refunded' }) refundedAmount: number;
  @ApiProperty({ example: 3490, description: 'Cents that can still be refunded (0 unless the sale is PAGO)' }) refundableAmount: number;
}
