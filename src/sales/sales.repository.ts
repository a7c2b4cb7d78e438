import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { SaleStatus } from '../domain/sale-status';
import { SaleItemEntity } from './entities/sale-item.entity';
import { SaleEntity } from './entities/sale.entity';

@Injectable()
export class SalesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(sale: Partial<SaleEntity>, items: Array<Partial<SaleItemEntity>>, manager: EntityManager): Promise<SaleEntity> {
    const sales = manager.getRepository(SaleEntity);
    const { identifiers } = await sales.insert(sales.create(sale) as QueryDeepPartialEntity<SaleEntity>);
    const id = identifiers[0].id as number;
    await manager
      .getRepository(SaleItemEntity)
      .insert(items.map((item, position) => ({ ...item, saleId: id, position })) as QueryDeepPartialEntity<SaleItemEntity>[]);
    return sales.findOneByOrFail({ id });
  }

  findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<SaleEntity | null> {
    return manager.getRepository(SaleEntity).findOneBy({ id });
  }

  /** The sale locked for this transaction (SELECT … FOR UPDATE), with its card token. */
  findByIdForUpdate(id: number, manager: EntityManager): Promise<SaleEntity | null> {
    return manager
      .getRepository(SaleEntity)
      .createQueryBuilder('sale')
      .addSelect('sale.cardToken')
      .where('sale.id = :id', { id })
      .setLock('pessimistic_write')
      .getOne();
  }

  itemsOf(saleId: number, manager: EntityManager = this.dataSource.manager): Promise<SaleItemEntity[]> {
    return manager.getRepository(SaleItemEntity).find({ where: { saleId }, order: { position: 'ASC' } });
  }

  /**
   * Saves a move of the sale with its other changed columns, only if it is still in `expected`;
   * false when someone else moved it first.
   */
  async updateStatusIfCurrent(
    id: number,
    expected: SaleStatus,
    changes: Partial<SaleEntity> & { status: SaleStatus },
    manager: EntityManager,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(SaleEntity)
      .set({ ...changes, updatedAt: () => 'now()' } as QueryDeepPartialEntity<SaleEntity>)
      .where('id = :id AND status = :expected', { id, expected })
      .execute();
    return (result.affected ?? 0) === 1;
  }

  async update(id: number, changes: Partial<SaleEntity>, manager: EntityManager): Promise<void> {
    await manager.getRepository(SaleEntity).update({ id }, changes as QueryDeepPartialEntity<SaleEntity>);
  }

  /** Ids of the seller's (or every seller's) PENDENTE sales whose expiry has passed, locked and skipped by other workers. */
  async claimExpired(now: Date, sellerId: number | null, limit: number, manager: EntityManager): Promise<number[]> {
    const rows: Array<{ id: number }> = await manager.query(
      `SELECT id FROM sales
        WHERE status = 'PENDENTE' AND expires_at IS NOT NULL AND expires_at <= $1 AND ($2::int IS NULL OR seller_id = $2)
        ORDER BY expires_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, sellerId, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Ids of PAGO sales whose card reserve is due for release. */
  async claimReservesDue(now: Date, sellerId: number | null, limit: number, manager: EntityManager): Promise<number[]> {
    const rows: Array<{ id: number }> = await manager.query(
      `SELECT id FROM sales
        WHERE status = 'PAGO' AND reserve_settled_at IS NULL AND reserve_release_due_at IS NOT NULL
          AND reserve_release_due_at <= $1 AND ($2::int IS NULL OR seller_id = $2)
        ORDER BY reserve_release_due_at LIMIT $3 FOR UPDATE SKIP LOCKED`,
      [now, sellerId, limit],
    );
    return rows.map((row) => row.id);
  }
}
