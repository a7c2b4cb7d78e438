import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { BalanceEntity } from './entities/balance.entity';

@Injectable()
export class BalanceRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The seller's balance row, created with zero values when it does not exist yet (spec 2.8). */
  async findOrCreate(sellerId: number, manager: EntityManager = this.dataSource.manager): Promise<BalanceEntity> {
    await manager
      .createQueryBuilder()
      .insert()
      .into(BalanceEntity)
      .values({ sellerId, availableCents: 0 as never, blockedCents: 0 as never, updatedAt: () => 'now()' })
      .orIgnore()
      .execute();
    return manager.getRepository(BalanceEntity).findOneByOrFail({ sellerId });
  }
}
