import { Injectable } from '@nestjs/common';
import { SettingsRepository } from './settings.repository';

export interface PlatformSettings {
  apiWithdrawalsEnabled: boolean;
  updatedAt: string;
}

/** Platform-wide switches of the operator (platform.md §2). */
@Injectable()
export class SettingsService {
  constructor(private readonly settings: SettingsRepository) {}

  async current(): Promise<PlatformSettings> {
    const row = await this.settings.current();
    return { apiWithdrawalsEnabled: row.apiWithdrawalsEnabled, updatedAt: row.updatedAt.toISOString() };
  }

  async update(change: { apiWithdrawalsEnabled: boolean }): Promise<PlatformSettings> {
    await this.settings.setApiWithdrawalsEnabled(change.apiWithdrawalsEnabled);
    return this.current();
  }
}
