import { Controller, Get, Param, Query, UseFilters } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { SubscriptionsExceptionFilter } from '../common/filters/subscriptions-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import { SubscriptionListResponse, SubscriptionMetricsResponse, SubscriptionOneResponse } from './dto/subscription.response';
import { SubscriptionQueryDto } from './dto/subscription-query.dto';
import { SubscriptionsService } from './subscriptions.service';

export const LOOKUP_ERRORS = ['INVALID_ID', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL_ERROR'] as const;

/**
 * Spec 4.7, 4.8 and 4.12 (the reads); errors as `{success: false, error: {code, message}}` (spec 7.5). Pause,
 * resume and cancel (4.9-4.11) move money's state: the payments module serves them (SubscriptionActionsController).
 */
@ApiTags('Subscriptions')
@Controller('api/subscriptions')
@ApiKeyAuth()
@UseFilters(SubscriptionsExceptionFilter)
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  @Get()
  @ApiOperation({ summary: "The account's subscriptions, newest first, filtered and paginated" })
  @ApiOkResponse({ type: SubscriptionListResponse })
  @ApiErrorResponses('subscriptions', ['VALIDATION_ERROR', 'UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  async list(@CurrentSeller() seller: AuthenticatedSeller, @Query() query: SubscriptionQueryDto): Promise<SubscriptionListResponse> {
    return { success: true, data: await this.subscriptions.list(seller.id, query) };
  }

  @Get('metrics')
  @ApiOperation({ summary: 'Counts, MRR and ARR (reais) and churn rate of the account’s subscriptions' })
  @ApiOkResponse({ type: SubscriptionMetricsResponse })
  @ApiErrorResponses('subscriptions', ['UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL_ERROR'])
  async metrics(@CurrentSeller() seller: AuthenticatedSeller): Promise<SubscriptionMetricsResponse> {
    return { success: true, data: await this.subscriptions.metrics(seller.id) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One subscription with its counters' })
  @ApiOkResponse({ type: SubscriptionOneResponse })
  @ApiErrorResponses('subscriptions', [...LOOKUP_ERRORS])
  async get(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<SubscriptionOneResponse> {
    return { success: true, data: await this.subscriptions.get(seller.id, id) };
  }
}
