import { Body, Controller, Get, Headers, Param, Post, Res, UseFilters } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Response } from 'express';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { CashoutExceptionFilter } from '../common/filters/cashout-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { CashoutService } from './cashout.service';
import { CreateWithdrawalDto, WithdrawalLookupResponse, WithdrawalResponse } from './dto/withdrawal.dto';

@ApiTags('Cashout')
@Controller('api/public/cashout')
@ApiKeyAuth()
@UseFilters(CashoutExceptionFilter)
export class CashoutController {
  constructor(private readonly withdrawals: CashoutService) {}

  @Post()
  @ApiOperation({ summary: 'Withdraw available balance to a PIX key', description: 'Amounts in reais. Starts PENDING; the amount moves from available to blocked.' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 visible ASCII characters' })
  @ApiResponse({ status: 201, type: WithdrawalResponse })
  @ApiErrorResponses('cashout', [
    'VALIDATION_ERROR',
    'UNAUTHORIZED',
    'API_WITHDRAWAL_DISABLED_GLOBALLY',
    'TRANSFER_NOT_ALLOWED',
    'MINIMUM_VALUE',
    'MAXIMUM_VALUE',
    'INSUFFICIENT_BALANCE',
    'IDEMPOTENCY_KEY_REUSED',
    'GENERAL_ERROR',
  ])
  async create(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Body() body: CreateWithdrawalDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) response: Response,
  ): Promise<WithdrawalResponse> {
    const result = await this.withdrawals.request(seller.id, body, idempotencyKey);
    response.status(result.status);
    if (result.replayed) response.setHeader('Idempotent-Replayed', 'true');
    return result.body;
  }

  @Get(':id')
  @ApiOperation({ summary: 'One withdrawal of the account' })
  @ApiOkResponse({ type: WithdrawalLookupResponse })
  @ApiErrorResponses('cashout', ['INVALID_ID', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'GENERAL_ERROR'])
  get(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<WithdrawalLookupResponse> {
    return this.withdrawals.lookup(seller.id, id);
  }
}
