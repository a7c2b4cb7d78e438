import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PlatformSettingsEntity } from './entities/platform-settings.entity';

@Injectable()
export class SettingsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The single settings row (created by the first migration). */
  current(): Promise<PlatformSettingsEntity> {
    return this.dataSource.getRepository(PlatformSettingsEntity).findOneByOrFail({ id: 1 });
  }

  async setApiWithdrawalsEnabled(enabled: boolean): Promise<void> {
    await this.dataSource
      .getRepository(PlatformSettingsEntity)
      .update({ id: 1 }, { apiWithdrawalsEnabled: enabled, updatedAt: () => 'now()' });
  }
}
