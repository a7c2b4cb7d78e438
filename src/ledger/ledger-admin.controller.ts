import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { addDays, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { LedgerSummaryQueryDto, LedgerSummaryResponse } from './dto/ledger-summary.dto';
import { LedgerService } from './ledger.service';

/** The operator's view of the ledger: the platform's revenue, costs and each provider's figures for a period. */
@Controller('admin/ledger')
@AdminApi()
export class LedgerAdminController {
  constructor(private readonly ledger: LedgerService) {}

  @Get('summary')
  @ApiOperation({ summary: "The platform's fee and fine revenue, reversal costs and each provider's receivable for a period of Brazil days" })
  @ApiOkResponse({ type: LedgerSummaryResponse })
  @ApiErrorResponses('account', ['MISSING_FIELDS', 'VALIDATION_ERROR', 'UNAUTHORIZED'])
  summary(@Query() query: LedgerSummaryQueryDto): Promise<LedgerSummaryResponse> {
    if (query.from > query.to) throw new DomainError('VALIDATION_ERROR', 'from must not be after to', { field: 'from' });
    return this.ledger.summary(addDays(endOfBrazilDay(query.from), -1), endOfBrazilDay(query.to));
  }
}
