import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { WithdrawalStatus } from '../domain/withdrawal-status';
import { WithdrawalEntity } from './entities/withdrawal.entity';

@Injectable()
export class CashoutRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async insert(withdrawal: Partial<WithdrawalEntity>, manager: EntityManager): Promise<WithdrawalEntity> {
    const repository = manager.getRepository(WithdrawalEntity);
    const { identifiers } = await repository.insert(withdrawal as QueryDeepPartialEntity<WithdrawalEntity>);
    return repository.findOneByOrFail({ id: identifiers[0].id as number });
  }

  findById(id: number, manager: EntityManager = this.dataSource.manager): Promise<WithdrawalEntity | null> {
    return manager.getRepository(WithdrawalEntity).findOneBy({ id });
  }

  findByIdForUpdate(id: number, manager: EntityManager): Promise<WithdrawalEntity | null> {
    return manager.getRepository(WithdrawalEntity).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  async setExternalId(id: number, externalId: string, manager: EntityManager): Promise<void> {
    await manager.getRepository(WithdrawalEntity).update({ id }, { externalId });
  }

  /** Saves a move only if the withdrawal is still in `expected`; false when someone else moved it first. */
  async updateStatusIfCurrent(
    id: number,
    expected: WithdrawalStatus,
    changes: { status: WithdrawalStatus; processedAt: Date | null },
    manager: EntityManager,
  ): Promise<boolean> {
    const result = await manager
      .createQueryBuilder()
      .update(WithdrawalEntity)
      .set({ ...changes, updatedAt: () => 'now()' })
      .where('id = :id AND status = :expected', { id, expected })
      .execute();
    return result.affected === 1;
  }
}
