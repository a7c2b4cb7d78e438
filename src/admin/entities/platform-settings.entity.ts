import { Column, Entity, PrimaryColumn } from 'typeorm';

/** The single row of platform-wide switches the operator controls. */
@Entity({ name: 'platform_settings' })
export class PlatformSettingsEntity {
  @PrimaryColumn({ type: 'smallint' })
  id: number;

  @Column({ name: 'api_withdrawals_enabled', type: 'boolean' })
  apiWithdrawalsEnabled: boolean;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
