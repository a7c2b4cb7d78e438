import { Body, Controller, Get, HttpCode, Param, Post, Query, UseFilters } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/decorators/api-error-responses.decorator';
import { ApiKeyAuth } from '../common/decorators/api-key-auth.decorator';
import { CurrentSeller } from '../common/decorators/current-seller.decorator';
import { EventsExceptionFilter } from '../common/filters/events-exception.filter';
import { AuthenticatedSeller } from '../common/guards/authenticated-seller';
import { SellerService } from '../seller/seller.service';
import {
  EndpointListResponse,
  EventListResponse,
  EventOneResponse,
  EventsQueryDto,
  ExpiredSecretResponse,
  RedeliverFailedDto,
  RedeliveredResponse,
  RollSecretDto,
  RolledSecretResponse,
  SecretStateResponse,
} from './dto/events.dto';
import { EventsService } from './events.service';
import { ShownOnce } from '../common/decorators/shown-once.decorator';

const READ_ERRORS = ['UNAUTHORIZED', 'RATE_LIMITED', 'INTERNAL_ERROR'] as const;
const EVENT_ID = { name: 'id', description: 'The event id (X-Event-Id and webhook-id of its deliveries)', example: '0b6c1f8e-5d2a-4b7e-9a51-3c2d1e0f9a8b' };

/**
 * The events API (issue 23): what the outbox sent or tried to send to the seller's postback and webhook
 * URLs, their replay, the URLs' health and the postback secret's rotation. Key-pair auth; errors in the
 * events family, `{success: false, error: {code, message}}`.
 */
@ApiTags('Events')
@Controller('api/events')
@ApiKeyAuth()
@UseFilters(EventsExceptionFilter)
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly sellers: SellerService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The account’s events, newest first, filtered, a page at a time (cursor)' })
  @ApiOkResponse({ type: EventListResponse })
  @ApiErrorResponses('events', ['VALIDATION_ERROR', ...READ_ERRORS])
  async list(@CurrentSeller() seller: AuthenticatedSeller, @Query() query: EventsQueryDto): Promise<EventListResponse> {
    return { success: true, data: await this.events.list(seller.id, query) };
  }

  @Get('endpoints')
  @ApiOperation({ summary: 'The account’s postback and webhook URLs: failing after POSTBACK_ENDPOINT_FAILING_DAYS of failures without a success' })
  @ApiOkResponse({ type: EndpointListResponse })
  @ApiErrorResponses('events', [...READ_ERRORS])
  async endpoints(@CurrentSeller() seller: AuthenticatedSeller): Promise<EndpointListResponse> {
    return { success: true, data: await this.events.endpoints(seller.id) };
  }

  @Post('redeliver')
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Send again now every event whose latest try failed in [since, until), once each with its own id: each event one of MANUAL_SENDS_PER_HOUR, at most 1000 a call (remaining says what is left), idempotent',
  })
  @ApiAcceptedResponse({ type: RedeliveredResponse })
  @ApiErrorResponses('events', ['VALIDATION_ERROR', ...READ_ERRORS])
  async redeliverFailed(@CurrentSeller() seller: AuthenticatedSeller, @Body() body: RedeliverFailedDto): Promise<RedeliveredResponse> {
    return { success: true, data: await this.events.redeliverFailed(seller.id, new Date(body.since), body.until ? new Date(body.until) : undefined) };
  }

  @Get('secret')
  @ApiOperation({ summary: 'Whether a replaced postback secret still signs beside the current one, and until when' })
  @ApiOkResponse({ type: SecretStateResponse })
  @ApiErrorResponses('events', [...READ_ERRORS])
  async secret(@CurrentSeller() seller: AuthenticatedSeller): Promise<SecretStateResponse> {
    const expiresAt = await this.sellers.previousPostbackSecretExpiry(seller.id);
    return { success: true, data: { previousSecretExpiresAt: expiresAt?.toISOString() ?? null } };
  }

  @Post('secret/roll')
  @ShownOnce()
  @ApiOperation({
    summary: 'A new postback secret, shown once; the replaced one keeps signing beside it for overlapHours (default 24, at most 168)',
  })
  @ApiCreatedResponse({ type: RolledSecretResponse })
  @ApiErrorResponses('events', ['VALIDATION_ERROR', 'MALFORMED_JSON', 'UNSUPPORTED_MEDIA_TYPE', ...READ_ERRORS])
  async rollSecret(@CurrentSeller() seller: AuthenticatedSeller, @Body() body: RollSecretDto): Promise<RolledSecretResponse> {
    const rolled = await this.sellers.rotatePostbackSecret(seller.id, Math.round((body.overlapHours ?? 24) * 3600));
    return { success: true, data: { ...rolled, previousSecretExpiresAt: rolled.previousSecretExpiresAt?.toISOString() ?? null } };
  }

  @Post('secret/expire-previous')
  @HttpCode(200)
  @ApiOperation({ summary: 'Stop signing with the replaced secret now (a leaked secret)' })
  @ApiOkResponse({ type: ExpiredSecretResponse })
  @ApiErrorResponses('events', [...READ_ERRORS])
  async expirePrevious(@CurrentSeller() seller: AuthenticatedSeller): Promise<ExpiredSecretResponse> {
    return { success: true, data: { expired: await this.sellers.expirePreviousPostbackSecret(seller.id) } };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event with every delivery attempt and the headers each sent' })
  @ApiParam(EVENT_ID)
  @ApiOkResponse({ type: EventOneResponse })
  @ApiErrorResponses('events', ['VALIDATION_ERROR', 'NOT_FOUND', ...READ_ERRORS])
  async get(@CurrentSeller() seller: AuthenticatedSeller, @Param('id') id: string): Promise<EventOneResponse> {
    return { success: true, data: await this.events.get(seller.id, id) };
  }

  @Post(':id/redeliver')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send one event again now, with its own id: one try, or its waiting retry brought forward (one of MANUAL_SENDS_PER_HOUR)' })
  @ApiParam(EVENT_ID)
  @ApiAcceptedResponse({ type: EventOneResponse })
  @ApiErrorResponses('events', ['VALIDATION_ERROR', 'NOT_FOUND', ...READ_ERRORS])
  async redeliver(@CurrentSeller() seller: AuthenticatedSeller, @Param('id') id: string): Promise<EventOneResponse> {
    return { success: true, data: await this.events.redeliver(seller.id, id) };
  }
}
