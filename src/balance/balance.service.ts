import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Cents, addCents } from '../domain/money';
import { BalanceRepository } from './balance.repository';

export interface BalanceView {
  availableCents: Cents;
  blockedCents: Cents;
  totalCents: Cents;
  updatedAt: Date;
}

@Injectable()
export class BalanceService {
  constructor(private readonly balances: BalanceRepository) {}

  async balanceOf(sellerId: number, manager?: EntityManager): Promise<BalanceView> {
    const row = await this.balances.findOrCreate(sellerId, manager);
    return {
      availableCents: row.availableCents,
      blockedCents: row.blockedCents,
      totalCents: addCents(row.availableCents, row.blockedCents),
      updatedAt: row.updatedAt,
    };
  }

  /** Creates the zero balance of a new seller inside the seller's creation transaction. */
  async open(sellerId: number, manager: EntityManager): Promise<void> {
    await this.balances.findOrCreate(sellerId, manager);
  }
}
