import { Controller, Get, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { AccountExceptionFilter } from '../common/filters/account-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { BalanceResponse } from './dto/balance.response';
import { BalanceService } from './balance.service';
import { StatementQueryDto, StatementResponse } from './dto/statement.dto';

@ApiTags('Balance')
@Controller('api/public/balance')
@ApiKeyAuth()
@UseFilters(AccountExceptionFilter)
export class BalanceController {
  constructor(private readonly balance: BalanceService) {}

  @Get()
  @ApiOperation({ summary: 'Balance of the account', description: 'Available, blocked and total, in cents, as the ledger leaves them.' })
  @ApiOkResponse({ type: BalanceResponse })
  @ApiErrorResponses('account', ['UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  async get(@CurrentSeller() seller: AuthenticatedSeller): Promise<BalanceResponse> {
    const view = await this.balance.balanceOf(seller.id);
    return { available: view.availableCents, blocked: view.blockedCents, total: view.totalCents };
  }

  @Get('statement')
  @ApiOperation({
    summary: 'Statement (extrato) of the account',
    description:
      'Every movement of the available and blocked money, newest first, with its cause and the balance after it; ' +
      'from/to are Brazil days (UTC-3), inclusive; cursor-paginated (pass nextCursor). Cents.',
  })
  @ApiOkResponse({ type: StatementResponse })
  @ApiErrorResponses('account', ['VALIDATION_ERROR', 'UNAUTHORIZED', 'FORBIDDEN', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  statement(@CurrentSeller() seller: AuthenticatedSeller, @Query() query: StatementQueryDto): Promise<StatementResponse> {
    return this.balance.statement(seller.id, query);
  }
}
