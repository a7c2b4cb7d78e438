import { Body, Controller, Get, Headers, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Response } from 'express';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { SalesExceptionFilter } from '../common/filters/sales-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { CreateRefundDto, RefundListResponse, RefundResponse } from './dto/refund.dto';
import { RefundsService } from './refunds.service';

/** Refunds of a sale, full or partial; errors in the sales family's shape `{message, error}`. */
@ApiTags('Sales')
@Controller('api/sales/:id/refunds')
@ApiKeyAuth()
@UseFilters(SalesExceptionFilter)
export class RefundsController {
  constructor(private readonly refunds: RefundsService) {}

  @Post()
  @ApiOperation({
    summary: 'Refund a PAGO PIX or card sale, in full or in part',
    description:
      'Without `amount`, all that is left of the sale is refunded. Several partial refunds may follow each other up to the sale amount; the sale becomes ' +
      'ESTORNADO when its refunds cover it. The seller balance is debited at once by its share of the net amount (fees are not returned) and credited back ' +
      'if the provider fails the refund. A PIX refund is PENDING until the PSP confirms it; each status change is a signed `refund.status_changed` postback.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 visible ASCII characters' })
  @ApiBody({ type: CreateRefundDto, required: false })
  @ApiResponse({ status: 201, type: RefundResponse })
  @ApiErrorResponses('sales', ['VALIDATION_ERROR', 'MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE', 'INVALID_ID', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'SALE_NOT_REFUNDABLE', 'REFUND_EXCEEDS_REMAINING', 'REFUND_WINDOW_EXPIRED', 'IDEMPOTENCY_KEY_REUSED', 'CONFLICT', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  async create(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) saleId: number,
    @Body() body: CreateRefundDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<RefundResponse> {
    const result = await this.refunds.request(seller.id, saleId, body?.amount, idempotencyKey);
    response.status(result.status);
    if (result.replayed) response.setHeader('Idempotent-Replayed', 'true');
    return result.body;
  }

  @Get()
  @ApiOperation({ summary: "A sale's refunds, with what was refunded and what is left" })
  @ApiOkResponse({ type: RefundListResponse })
  @ApiErrorResponses('sales', ['INVALID_ID', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  list(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) saleId: number): Promise<RefundListResponse> {
    return this.refunds.list(seller.id, saleId);
  }
}
