import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { AdminApi } from '../common/decorators/admin-auth.decorator';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { DomainError } from '../domain/domain-error';
import { ReconciliationQueryDto, ReconciliationReport } from './dto/reconciliation.dto';
import { PixReconciliationService } from './pix-reconciliation.service';

/** Longest period one report compares (each asks the PSP for every Pix received in it). */
const MAX_PERIOD_DAYS = 31;

/** The operator's view of reconciliation with the PSP. */
@Controller('admin/reconciliation')
@AdminApi()
export class PixAdminController {
  constructor(private readonly reconciliation: PixReconciliationService) {}

  @Get()
  @ApiOperation({ summary: "Every difference between the Pix the PSP received in a period and what the gateway booked, with each return's state" })
  @ApiOkResponse({ type: ReconciliationReport })
  @ApiErrorResponses('account', ['MISSING_FIELDS', 'VALIDATION_ERROR', 'UNAUTHORIZED', 'SERVICE_UNAVAILABLE'])
  async report(@Query() query: ReconciliationQueryDto): Promise<ReconciliationReport> {
    const from = new Date(query.from);
    const to = new Date(query.to);
    if (from >= to) throw new DomainError('VALIDATION_ERROR', 'from must be before to', { field: 'from' });
    if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * 86_400_000) throw new DomainError('VALIDATION_ERROR', `A report covers ${MAX_PERIOD_DAYS} days at most`, { field: 'to' });
    try {
      return await this.reconciliation.report(from, to);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw new DomainError('SERVICE_UNAVAILABLE', `The PSP could not be asked: ${(error as Error).message}`);
    }
  }
}
