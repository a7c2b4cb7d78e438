import { ApiProperty } from '@nestjs/swagger';

/** Spec 2.8. */
export class BalanceResponse {
  @ApiProperty({ example: 125000, description: 'Cents usable for cashout' }) available: number;
  @ApiProperty({ example: 15000, description: 'Cents reserved for pending operations and open MEDs' }) blocked: number;
  @ApiProperty({ example: 140000, description: 'Cents, available plus blocked' }) total: number;
}
