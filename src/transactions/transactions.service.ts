import { Injectable } from '@nestjs/common';
import { TransactionResponse } from '../sales/dto/sale.response';
import { SalesService } from '../sales/sales.service';

/** Sale lookups (spec 4.2); the sales module owns the sales. */
@Injectable()
export class TransactionsService {
  constructor(private readonly sales: SalesService) {}

  get(sellerId: number, saleId: number): Promise<TransactionResponse> {
    return this.sales.transaction(sellerId, saleId);
  }
}
