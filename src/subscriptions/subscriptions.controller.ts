import { Body, Controller, Get, HttpCode, Param, Post, Query, UseFilters } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { SubscriptionsExceptionFilter } from '../common/filters/subscriptions-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { IdParamPipe } from '../common/pipes/id-param.pipe';
import {
  SubscriptionActionResponse,
  SubscriptionListResponse,
  SubscriptionMetricsResponse,
  SubscriptionOneResponse,
} from './dto/subscription.response';
import { CancelSubscriptionDto, SubscriptionQueryDto } from './dto/subscription-query.dto';
import { SubscriptionsService } from './subscriptions.service';

const LOOKUP_ERRORS = ['INVALID_ID', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'RATE_LIMITED', 'INTERNAL_ERROR'] as const;

/** Spec 4.7-4.12; errors as `{success: false, error: {code, message}}` (spec 7.5). */
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

  @Post(':id/pause')
  @HttpCode(200)
  @ApiOperation({ summary: 'Pause an ACTIVE or TRIALING subscription: nothing is charged while PAUSED' })
  @ApiOkResponse({ type: SubscriptionActionResponse })
  @ApiErrorResponses('subscriptions', ['INVALID_STATUS', 'ALREADY_PAUSED', ...LOOKUP_ERRORS])
  async pause(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<SubscriptionActionResponse> {
    return { success: true, message: 'Subscription paused', data: await this.subscriptions.pause(seller.id, id) };
  }

  @Post(':id/resume')
  @HttpCode(200)
  @ApiOperation({ summary: 'Resume a PAUSED subscription: ACTIVE, next billing one cycle after the resume date' })
  @ApiOkResponse({ type: SubscriptionActionResponse })
  @ApiErrorResponses('subscriptions', ['INVALID_STATUS', ...LOOKUP_ERRORS])
  async resume(@CurrentSeller() seller: AuthenticatedSeller, @Param('id', IdParamPipe) id: number): Promise<SubscriptionActionResponse> {
    return { success: true, message: 'Subscription resumed', data: await this.subscriptions.resume(seller.id, id) };
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel now (default) or at the end of the current period (cancelImmediately false)' })
  @ApiBody({ type: CancelSubscriptionDto, required: false })
  @ApiOkResponse({ type: SubscriptionActionResponse })
  @ApiErrorResponses('subscriptions', ['VALIDATION_ERROR', 'ALREADY_CANCELLED', 'INVALID_STATUS', ...LOOKUP_ERRORS])
  async cancel(
    @CurrentSeller() seller: AuthenticatedSeller,
    @Param('id', IdParamPipe) id: number,
    @Body() body: CancelSubscriptionDto,
  ): Promise<SubscriptionActionResponse> {
    const immediately = body.cancelImmediately ?? true;
    const data = await this.subscriptions.cancel(seller.id, id, body.reason ?? null, immediately);
    return { success: true, message: immediately ? 'Subscription cancelled' : 'Subscription will be cancelled at the end of the current period', data };
  }
}
