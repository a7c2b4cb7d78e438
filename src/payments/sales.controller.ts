import { Body, Controller, Headers, Post, Res, UseFilters } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Response } from 'express';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { SalesExceptionFilter } from '../common/filters/sales-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { CreateSaleDto } from '../sales/dto/create-sale.dto';
import { CreateSaleResponse } from '../sales/dto/sale.response';
import { CheckoutService } from './checkout.service';

@ApiTags('Sales')
@Controller('api/sales')
@ApiKeyAuth()
@UseFilters(SalesExceptionFilter)
export class SalesController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a sale paid by PIX, card, boleto or transfer',
    description:
      'PIX, boleto and transfer sales start PENDENTE. Card sales are charged at once and come back PAGO, RECUSADO or FALHA. ' +
      'Send an Idempotency-Key to retry safely: the same key and body within 24 h replays the first answer.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 visible ASCII characters' })
  @ApiResponse({ status: 201, type: CreateSaleResponse })
  @ApiErrorResponses('sales', [
    'MISSING_FIELDS',
    'VALIDATION_ERROR',
    'MALFORMED_JSON',
    'UNSUPPORTED_MEDIA_TYPE',
    'UNAUTHORIZED',
    'FORBIDDEN',
    'MINIMUM_AMOUNT',
    'IDEMPOTENCY_KEY_REUSED',
    'NOT_SUPPORTED',
    'PSP_REFUSED',
    'RATE_LIMITED',
    'SERVICE_UNAVAILABLE',
    'INTERNAL_ERROR',
  ])
  async create(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Body() body: CreateSaleDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<CreateSaleResponse> {
    const result = await this.checkout.create(seller.id, body, idempotencyKey);
    response.status(result.status);
    if (result.replayed) response.setHeader('Idempotent-Replayed', 'true');
    return result.body;
  }
}
