import { Controller, Get, Param, Post, Query, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { addDays, endOfBrazilDay } from '../../domain/dates';
import { EVENT_DELIVERY_STATUSES, EVENT_TYPES } from '../../notifications/dto/events.dto';
import { EventsService } from '../../notifications/events.service';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { DELIVERIES_PAGE_SIZES, DeliveriesFilterDto } from '../deliveries-filter.dto';
import { failingEndpointsOf } from '../failing-endpoints';
import { FormErrors, formErrorsOf, formText, limitedSend, NO_ERRORS, noticeOf, validated } from '../forms';

const FILTER_FIELDS = ['type', 'deliveryStatus', 'from', 'to', 'limit'] as const;
type Filters = Record<(typeof FILTER_FIELDS)[number], string>;

const NOTICES: ReadonlyMap<string, string> = new Map([['redelivered', 'Evento reenviado: ele voltou para a fila e é entregue em instantes.']]);

/** pt-BR words for the events API's delivery statuses. */
const DELIVERY_STATUS_LABELS: Record<(typeof EVENT_DELIVERY_STATUSES)[number], string> = { pending: 'Pendente', delivered: 'Entregue', failed: 'Falhou' };
/** Where an event's object has its own dashboard page. */
const OBJECT_PAGES: Record<string, string> = { sale: '/dashboard/sales', subscription: '/dashboard/subscriptions', withdrawal: '/dashboard/withdrawals' };
const BASE = '/dashboard/integrations/deliveries';
/** The period a bulk replay covers when the filter names none. */
const DEFAULT_REPLAY_HOURS = 24;

/** The filter's Brazilian days (both inclusive) as the instants they start and end at, the way the sales page reads them. */
function periodOf(filters: { from?: string; to?: string }): { since?: Date; until?: Date } {
  return {
    since: filters.from ? addDays(endOfBrazilDay(filters.from), -1) : undefined,
    until: filters.to ? endOfBrazilDay(filters.to) : undefined,
  };
}

/**
 * The seller's deliveries (Integrações → Entregas): the events the outbox holds, filtered and a page at a
 * time, one event's body, headers and attempts, and their replay one by one or in bulk, through
 * EventsService (the events API's rules and limits).
 */
@ApiExcludeController()
@Controller(BASE)
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardDeliveriesController {
  constructor(private readonly events: EventsService) {}

  @Get()
  async list(@CurrentUser() user: DashboardUser, @Query() raw: Record<string, unknown>, @Res() response: Response): Promise<void> {
    const replay = [raw.requeued, raw.remaining].every((value) => typeof value === 'string' && /^\d{1,7}$/.test(value))
      ? { requeued: Number(raw.requeued), remaining: Number(raw.remaining) }
      : null;
    await this.renderList(response, user, raw, { replay });
  }

  @Post('redeliver-failed')
  async redeliverFailed(@CurrentUser() user: DashboardUser, @Req() request: Request, @Res() response: Response): Promise<void> {
    const raw = Object.fromEntries(FILTER_FIELDS.map((field) => [field, formText(request, field)]));
    const { value, errors } = await validated(DeliveriesFilterDto, raw);
    if (errors) return this.renderList(response, user, raw, { errors }, 400);
    const period = periodOf(value);
    const now = new Date();
    const since = period.since ?? addDays(period.until && period.until < now ? period.until : now, -DEFAULT_REPLAY_HOURS / 24);
    const until = period.until ?? now;
    let result: { requeued: number; remaining: number } | null;
    try {
      result = await limitedSend(
        response,
        () => this.events.redeliverFailed(user.sellerId, since, until),
        (refusal) => this.renderList(response, user, raw, { refusal }),
      );
    } catch (error) {
      return this.renderList(response, user, raw, { errors: formErrorsOf(error, { since: 'from', until: 'to' }) }, 400);
    }
    if (!result) return;
    const query = new URLSearchParams(Object.entries(raw).filter(([, text]) => text !== ''));
    query.set('requeued', String(result.requeued));
    query.set('remaining', String(result.remaining));
    response.redirect(303, `${BASE}?${query.toString()}`);
  }

  @Get(':eventId')
  async detail(@CurrentUser() user: DashboardUser, @Param('eventId') eventId: string, @Query('notice') notice: unknown, @Res() response: Response): Promise<void> {
    await this.renderDetail(response, user, eventId, { notice: noticeOf(NOTICES, notice) });
  }

  @Post(':eventId/redeliver')
  async redeliver(@CurrentUser() user: DashboardUser, @Param('eventId') eventId: string, @Res() response: Response): Promise<void> {
    const sent = await limitedSend(
      response,
      () => this.events.redeliver(user.sellerId, eventId),
      (refusal) => this.renderDetail(response, user, eventId, { refusal }),
    );
    if (sent) response.redirect(303, `${BASE}/${sent.id}?notice=redelivered`);
  }

  private async renderList(response: Response, user: DashboardUser, raw: Record<string, unknown>, extra: Record<string, unknown>, status?: number): Promise<void> {
    const filters = Object.fromEntries(FILTER_FIELDS.map((field) => [field, typeof raw[field] === 'string' ? raw[field] : ''])) as Filters;
    const query = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== '')).toString();
    const base = {
      filters,
      query,
      cursor: typeof raw.cursor === 'string' ? raw.cursor : '',
      types: EVENT_TYPES,
      statuses: DELIVERY_STATUS_LABELS,
      pageSizes: DELIVERIES_PAGE_SIZES,
      objectPages: OBJECT_PAGES,
      failingEndpoints: await failingEndpointsOf(this.events, user.sellerId),
      errors: NO_ERRORS,
      refusal: null,
      replay: null,
      defaultReplayHours: DEFAULT_REPLAY_HOURS,
    };
    const { value, errors } = await validated(DeliveriesFilterDto, { ...filters, cursor: raw.cursor });
    let page: { events: unknown[]; nextCursor: string | null } = { events: [], nextCursor: null };
    let listErrors: FormErrors | null = errors;
    if (!listErrors) {
      const period = periodOf(value);
      if (period.since && period.until && period.until <= period.since) {
        listErrors = { fields: { to: 'A data final não pode ser anterior à inicial.' }, form: 'Corrija os campos indicados.' };
      } else {
        page = await this.events.list(user.sellerId, {
          type: value.type,
          deliveryStatus: value.deliveryStatus,
          createdAfter: period.since?.toISOString(),
          createdBefore: period.until?.toISOString(),
          limit: value.limit ?? DELIVERIES_PAGE_SIZES[0],
          cursor: value.cursor,
        });
      }
    }
    if (status !== undefined) response.status(status);
    else if (listErrors) response.status(400);
    response.render('deliveries', { ...base, ...page, ...(listErrors ? { errors: listErrors } : {}), ...extra });
  }

  private async renderDetail(response: Response, user: DashboardUser, eventId: string, extra: Record<string, unknown>): Promise<void> {
    const event = await this.events.get(user.sellerId, eventId);
    const lastHeaders = [...event.deliveryAttempts].reverse().find((attempt) => attempt.requestHeaders)?.requestHeaders ?? null;
    response.render('delivery', {
      event,
      lastHeaders,
      statuses: DELIVERY_STATUS_LABELS,
      objectPages: OBJECT_PAGES,
      failingEndpoints: await failingEndpointsOf(this.events, user.sellerId),
      notice: null,
      refusal: null,
      ...extra,
    });
  }
}
