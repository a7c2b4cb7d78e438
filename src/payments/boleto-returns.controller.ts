import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { LateBoletoPayment } from './boleto-payments.repository';
import { BoletoPaymentsService } from './boleto-payments.service';

/** Most late payments one answer lists. */
const LIST_LIMIT = 500;

export class BoletoReturnsQueryDto {
  @ApiPropertyOptional({ enum: ['DUE', 'RETURNED', 'ALL'], example: 'DUE', description: 'DUE (default): still owed to their payers' })
  @IsOptional()
  @IsIn(['DUE', 'RETURNED', 'ALL'], { message: 'status must be one of: DUE, RETURNED, ALL' })
  status?: 'DUE' | 'RETURNED' | 'ALL';
}

export class MarkBoletoReturnedDto {
  @ApiProperty({ example: 'TED 2026-12-01, comprovante 123456', description: 'How the money went back to the payer (1 to 500 characters)' })
  @IsDefined()
  @IsString()
  @Length(1, 500)
  note: string;
}

export class LateBoletoPaymentResponse {
  @ApiProperty({ example: 3 }) id: number;
  @ApiProperty({ example: 1042 }) saleId: number;
  @ApiProperty({ example: 7 }) sellerId: number;
  @ApiProperty({ example: 'cielo' }) provider: string;
  @ApiProperty({ example: '8e1b2a3c-0d4e-4f5a-9b6c-7d8e9f0a1b2c', description: "The boleto's id at its issuer" }) paymentId: string;
  @ApiProperty({ example: 15000, description: 'What the payer paid, in cents' }) amount: number;
  @ApiProperty({ enum: ['NOTIFICATION', 'POLL'] }) seenBy: string;
  @ApiProperty({ enum: ['DUE', 'RETURNED'] }) status: 'DUE' | 'RETURNED';
  @ApiProperty({ example: null, nullable: true, type: String }) returnedAt: string | null;
  @ApiProperty({ example: null, nullable: true, type: String }) returnNote: string | null;
  @ApiProperty({ example: '2026-12-01T09:00:00.000Z', description: 'When the late payment was seen' }) createdAt: string;
}

function present(late: LateBoletoPayment): LateBoletoPaymentResponse {
  return {
    id: late.id,
    saleId: late.saleId,
    sellerId: late.sellerId,
    provider: late.provider,
    paymentId: late.paymentId,
    amount: late.amountCents,
    seenBy: late.seenBy,
    status: late.returnedAt ? 'RETURNED' : 'DUE',
    returnedAt: late.returnedAt?.toISOString() ?? null,
    returnNote: late.returnNote,
    createdAt: late.createdAt.toISOString(),
  };
}

/**
 * The operator's list of boletos paid after their sale was cancelled (issue 40): the issuer holds the
 * money, owed back to the payer (PAYER_RETURNS_DUE) until the operator returns it, outside the gateway,
 * and marks it returned here.
 */
@Controller('admin/boleto-returns')
@AdminApi()
export class BoletoReturnsController {
  constructor(private readonly boletos: BoletoPaymentsService) {}

  @Get()
  @ApiOperation({ summary: 'Boletos paid after their sale was cancelled (or of another amount): owed back to their payers' })
  @ApiOkResponse({ type: LateBoletoPaymentResponse, isArray: true })
  @ApiErrorResponses('account', ['VALIDATION_ERROR', 'UNAUTHORIZED'])
  async list(@Query() query: BoletoReturnsQueryDto): Promise<LateBoletoPaymentResponse[]> {
    const status = query.status ?? 'DUE';
    const late = await this.boletos.listLate(status === 'ALL' ? null : status === 'RETURNED', LIST_LIMIT);
    return late.map(present);
  }

  @Post(':id/returned')
  @HttpCode(200)
  @ApiOperation({ summary: 'Mark a late boleto payment returned to its payer (books the return once; 409 when it was marked already)' })
  @ApiOkResponse({ type: LateBoletoPaymentResponse })
  @ApiErrorResponses('account', ['MISSING_FIELDS', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'])
  async markReturned(@Param('id', IdParamPipe) id: number, @Body() body: MarkBoletoReturnedDto): Promise<LateBoletoPaymentResponse> {
    return present(await this.boletos.markReturned(id, body.note));
  }
}
