import { Injectable } from '@nestjs/common';
import { addDays, brazilDate, endOfBrazilDay } from '../domain/dates';
import { DomainError } from '../domain/domain-error';
import { Cents, cents } from '../domain/money';
import { AdminSaleResponse, TransactionResponse } from './dto/sale.response';
import { SaleQueryDto } from './dto/sale-query.dto';
import { SaleEntity } from './entities/sale.entity';
import { SaleListItem, toSaleListItem, toTransaction } from './sale.presenter';
import { SaleStatusChange, SalesRepository } from './sales.repository';

export { DEFAULT_BOLETO_DAYS, MINIMUM_SALE_CENTS } from '../domain/sale-request';

/**
 * The seller's sales as read: the lookup (GET /api/transactions/{id}), the list, a sale's status
 * history and the paid sales per day; and any sale as the operator sees it. Sales are written and moved by the payments module
 * (src/payments), the one owner of the money pipeline.
 */
@Injectable()
export class SalesService {
  constructor(private readonly sales: SalesRepository) {}

  /** GET /api/transactions/{id}: 404 unknown, 403 another seller's. */
  async transaction(sellerId: number, saleId: number): Promise<TransactionResponse> {
    const found = await this.sales.findForLookup(saleId);
    const sale = found?.sale ?? null;
    assertOwnedSale(sale, sellerId, saleId);
    return toTransaction(sale, found?.items ?? []);
  }

  /** A page of the seller's sales, newest first, filtered; dates are Brazilian days, both inclusive. */
  async list(sellerId: number, query: SaleQueryDto): Promise<{ sales: SaleListItem[]; pagination: { page: number; limit: number; total: number; totalPages: number } }> {
    const page = query.page ?? 1;
    const limit = query.limit ?? 20;
    if (query.startDate && query.endDate && query.startDate > query.endDate) {
      throw new DomainError('VALIDATION_ERROR', 'startDate must not be after endDate', { field: 'startDate' });
    }
    const { rows, total } = await this.sales.page(
      sellerId,
      {
        status: query.status,
        paymentMethod: query.paymentMethod,
        search: query.search?.trim() || undefined,
        createdFrom: query.startDate ? addDays(endOfBrazilDay(query.startDate), -1) : undefined,
        createdBefore: query.endDate ? endOfBrazilDay(query.endDate) : undefined,
      },
      page,
      limit,
    );
    return { sales: rows.map(toSaleListItem), pagination: { page, limit, total, totalPages: Math.ceil(total / limit) } };
  }

  /** The sale's status history, oldest first: 404 unknown, 403 another seller's. */
  async statusHistory(sellerId: number, saleId: number): Promise<SaleStatusChange[]> {
    assertOwnedSale(await this.sales.findById(saleId), sellerId, saleId);
    return this.sales.statusHistory(saleId);
  }

  /** Any seller's sale as the operator sees it: its lookup, its seller, and its status history with who recorded each move. 404 unknown. */
  async forOperator(saleId: number): Promise<AdminSaleResponse> {
    const found = await this.sales.findForLookup(saleId);
    assertSaleExists(found, saleId);
    const history = await this.sales.statusHistory(saleId);
    return {
      ...toTransaction(found.sale, found.items),
      sellerId: found.sale.sellerId,
      statusHistory: history.map((line) => ({ ...line, changedAt: new Date(line.changedAt).toISOString() })),
    };
  }

  /** Paid sales (PAGO now) per Brazilian day over the last `days` days up to `now`, every day listed, oldest first. */
  async paidPerDay(sellerId: number, days: number, now = new Date()): Promise<Array<{ day: string; amountCents: Cents; count: number }>> {
    const today = brazilDate(now);
    const first = brazilDate(addDays(now, -(days - 1)));
    const rows = await this.sales.paidPerDay(sellerId, addDays(endOfBrazilDay(first), -1));
    const byDay = new Map(rows.map((row) => [row.day, row]));
    const result: Array<{ day: string; amountCents: Cents; count: number }> = [];
    for (let offset = days - 1; offset >= 0; offset -= 1) {
      const day = brazilDate(addDays(now, -offset));
      if (day > today) break;
      result.push(byDay.get(day) ?? { day, amountCents: cents(0), count: 0 });
    }
    return result;
  }
}

export function assertOwnedSale<T extends Pick<SaleEntity, 'sellerId'>>(sale: T | null, sellerId: number, saleId: number): asserts sale is T {
  assertSaleExists(sale, saleId);
  if (sale.sellerId !== sellerId) throw new DomainError('FORBIDDEN', `Sale ${saleId} belongs to another account`);
}

/** Whatever its seller (the operator's routes): 404 unknown. */
export function assertSaleExists<T>(sale: T | null, saleId: number): asserts sale is T {
  if (!sale) throw new DomainError('NOT_FOUND', `Sale ${saleId} not found`);
}
