import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SaleStatus } from '../domain/sale-status';
import { SaleSubscriptionResponse } from './dto/sale.response';
import { SaleEntity } from './entities/sale.entity';

export interface SubscriptionRequest {
  billingCycle: string;
  trialDays?: number;
}

/**
 * What the subscriptions module does around sales, in the sale's own transaction. The subscriptions
 * module registers it at start-up: it builds on sales (a renewal is a sale), so sales cannot import it.
 */
export interface SubscriptionSaleHook {
  /**
   * In the creating sale's transaction, before the sale is written: opens the subscription (PENDING) of
   * a sale with subscription.enabled, from the sale's columns (customer, amount, card token); its id.
   */
  open(manager: EntityManager, sale: Partial<SaleEntity>, items: Array<{ title: string; productId?: number | null }>, request: SubscriptionRequest, now: Date): Promise<number>;
  /** The `subscription` block of a sale that created one, read through the caller's manager (or the pool). */
  summary(subscriptionId: number, manager?: EntityManager): Promise<SaleSubscriptionResponse | null>;
  /** In the move's transaction, after a sale that charges a subscription changed status. */
  saleMoved(manager: EntityManager, sale: SaleEntity, previous: SaleStatus, now: Date): Promise<void>;
  /** In the moves' transaction, after many sales that charge subscriptions changed status (a billing batch): saleMoved for each, at once. */
  salesMoved(manager: EntityManager, moves: Array<{ sale: SaleEntity; previous: SaleStatus }>, now: Date): Promise<void>;
}

@Injectable()
export class SaleHooks {
  private subscription: SubscriptionSaleHook | null = null;

  register(hook: SubscriptionSaleHook): void {
    this.subscription = hook;
  }

  get subscriptions(): SubscriptionSaleHook {
    if (!this.subscription) throw new Error('The subscriptions module is not loaded');
    return this.subscription;
  }
}
