import { Controller, Get, Param, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { TransactionsExceptionFilter } from '../common/filters/transactions-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { TransactionResponse } from '../sales/dto/sale.response';
import { TransactionsService } from './transactions.service';

@ApiTags('Transactions')
@Controller('api/transactions')
@ApiKeyAuth()
@UseFilters(TransactionsExceptionFilter)
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Get(':id')
  @ApiOperation({ summary: 'One sale of the account' })
  @ApiParam({ name: 'id', type: Number, example: 1234 })
  @ApiOkResponse({ type: TransactionResponse })
  @ApiErrorResponses('transactions', ['INVALID_ID', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  get(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<TransactionResponse> {
    return this.transactions.get(seller.id, id);
  }
}
