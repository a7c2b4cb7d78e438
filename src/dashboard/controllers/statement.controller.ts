import { Controller, Get, Query, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Response } from 'express';
import { BalanceService } from '../../balance/balance.service';
import { StatementLine, StatementQueryDto } from '../../balance/dto/statement.dto';
import { DashboardExceptionFilter } from '../../common/filters/dashboard-exception.filter';
import { DomainError } from '../../domain/domain-error';
import { cents, centsToReaisString } from '../../domain/money';
import { LedgerEntryKind } from '../../domain/ledger';
import { CurrentUser, DashboardAuthGuard, DashboardUser } from '../dashboard-auth.guard';
import { checked, formErrorsOf, NO_ERRORS } from '../forms';

/** What each movement is, as the seller reads it. */
const KIND_LABELS: Record<LedgerEntryKind, string> = {
  SALE_PAID: 'Venda paga',
  RESERVE_RELEASED: 'Reserva liberada',
  MED_OPENED: 'MED aberto',
  MED_WON: 'MED ganho',
  MED_LOST: 'MED perdido',
  CHARGEBACK_OPENED: 'Multa de pré-chargeback',
  CHARGEBACK_CONFIRMED: 'Chargeback confirmado',
  REFUND: 'Estorno',
  REFUND_REQUESTED: 'Estorno solicitado',
  REFUND_SETTLED: 'Estorno concluído',
  REFUND_FAILED: 'Estorno não realizado (valor devolvido)',
  PIX_RETURN_DUE: 'Pix a devolver',
  PIX_RETURNED: 'Pix devolvido',
  BOLETO_RETURN_DUE: 'Boleto pago após o cancelamento, a devolver',
  BOLETO_RETURNED: 'Boleto devolvido ao pagador',
  PSP_RETURN: 'Devolução feita pelo PSP (MED)',
  WITHDRAWAL_REQUESTED: 'Saque solicitado',
  WITHDRAWAL_SENT: 'Saque enviado',
  WITHDRAWAL_COMPLETED: 'Saque concluído',
  WITHDRAWAL_RETURNED: 'Saque devolvido',
};

/** Most lines one CSV download holds (a page of 200 at a time); a longer period is split by the seller. */
const CSV_MAX_LINES = 50_000;

/** The seller's statement (extrato): the API's statement as a page, and a period as CSV. */
@ApiExcludeController()
@Controller('dashboard/statement')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardStatementController {
  constructor(private readonly balance: BalanceService) {}

  @Get()
  async page(@CurrentUser() user: DashboardUser, @Query() query: Record<string, unknown>, @Res() response: Response): Promise<void> {
    const filters = { from: text(query.from), to: text(query.to) };
    try {
      const statement = await this.balance.statement(user.sellerId, { ...(await checkedPeriod(query)), limit: 50 });
      const balance = await this.balance.balanceOf(user.sellerId);
      response.render('statement', { filters, lines: statement.statement, nextCursor: statement.nextCursor, labels: KIND_LABELS, balance, errors: NO_ERRORS });
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'VALIDATION_ERROR') throw error;
      response.status(400).render('statement', { filters, lines: [], nextCursor: null, labels: KIND_LABELS, balance: null, errors: formErrorsOf(error) });
    }
  }

  @Get('csv')
  async csv(@CurrentUser() user: DashboardUser, @Query() query: Record<string, unknown>, @Res() response: Response): Promise<void> {
    // A bad date is the dashboard's 400 page (DashboardExceptionFilter), as on the statement page.
    const filters = await checkedPeriod(query);
    const lines: StatementLine[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.balance.statement(user.sellerId, { ...filters, cursor, limit: 200 });
      lines.push(...page.statement);
      cursor = page.nextCursor ?? undefined;
    } while (cursor && lines.length < CSV_MAX_LINES);
    const name = `extrato-${filters.from ?? 'inicio'}-${filters.to ?? 'hoje'}.csv`;
    response
      .status(200)
      .setHeader('Content-Type', 'text/csv; charset=utf-8')
      .setHeader('Content-Disposition', `attachment; filename="${name}"`)
      .setHeader('Cache-Control', 'no-store')
      .send(toCsv(lines));
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * The period and cursor asked for, checked as the API checks them (StatementQueryDto): a date that is not
 * YYYY-MM-DD or a cursor that is not one is a VALIDATION_ERROR naming it, never a query (it was a 500).
 */
async function checkedPeriod(query: Record<string, unknown>): Promise<{ from?: string; to?: string; cursor?: string }> {
  const { from, to, cursor } = await checked(StatementQueryDto, { from: text(query.from) || undefined, to: text(query.to) || undefined, cursor: text(query.cursor) || undefined });
  return { from, to, cursor };
}

const reais = (value: number) => centsToReaisString(cents(value));

/** RFC 4180 CSV, newest first: one line per movement, amounts in reais with a dot as decimal separator. */
function toCsv(lines: StatementLine[]): string {
  const header = ['id', 'data', 'tipo', 'descricao', 'referencia', 'disponivel', 'bloqueado', 'disponivel_apos', 'bloqueado_apos'];
  const rows = lines.map((line) => [
    String(line.id),
    line.createdAt,
    line.kind,
    KIND_LABELS[line.kind as LedgerEntryKind] ?? line.kind,
    `${line.reference.type === 'SALE' ? 'venda' : 'saque'} ${line.reference.id}`,
    reais(line.available),
    reais(line.blocked),
    reais(line.availableAfter),
    reais(line.blockedAfter),
  ]);
  const quote = (field: string) => (/[",\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field);
  return [header, ...rows].map((row) => row.map(quote).join(',')).join('\r\n') + '\r\n';
}
