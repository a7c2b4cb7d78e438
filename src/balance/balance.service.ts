import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { BalanceView, LedgerService } from '../ledger/ledger.service';

export type { BalanceView } from '../ledger/ledger.service';

/** The balance of spec 2.8, read through the ledger (which owns the balances table). */
@Injectable()
export class BalanceService {
  constructor(private readonly ledger: LedgerService) {}

  balanceOf(sellerId: number, manager?: EntityManager): Promise<BalanceView> {
    return this.ledger.balanceOf(sellerId, manager);
  }

  /** Creates the zero balance of a new seller inside the seller's creation transaction. */
  async open(sellerId: number, manager: EntityManager): Promise<void> {
    await this.ledger.openBalance(sellerId, manager);
  }
}
