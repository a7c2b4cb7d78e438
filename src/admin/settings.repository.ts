import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityNotFoundError } from 'typeorm';
import { PlainRows } from '../database/plain-rows';
import { PlatformSettingsEntity } from './entities/platform-settings.entity';

@Injectable()
export class SettingsRepository {
  private readonly rows: PlainRows<PlatformSettingsEntity>;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.rows = new PlainRows(dataSource.getMetadata(PlatformSettingsEntity));
  }

  /** The single settings row (created by the first migration). */
  async current(): Promise<PlatformSettingsEntity> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query('SELECT * FROM platform_settings WHERE id = 1');
    if (rows.length === 0) throw new EntityNotFoundError(PlatformSettingsEntity, { id: 1 });
    return this.rows.hydrate(rows[0]);
  }

  async setApiWithdrawalsEnabled(enabled: boolean): Promise<void> {
    await this.dataSource.query('UPDATE platform_settings SET api_withdrawals_enabled = $1, updated_at = now() WHERE id = 1', [enabled]);
  }
}
