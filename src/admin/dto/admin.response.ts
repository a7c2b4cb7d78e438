import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsDefined } from 'class-validator';
import { SellerAccountResponse } from '../../seller/dto/seller-account.response';
import { FeesDto } from './seller-input.dto';

export class KeyPairResponse {
  @ApiProperty({ example: 'pk_Zk3v9Qm1...' }) publicKey: string;
  @ApiProperty({ example: 'sk_8JdQ0xY2...', description: 'Shown once: only its hash is stored' }) privateKey: string;
}

export class InvitationResponse {
  @ApiProperty({ example: 'http://localhost:3000/dashboard/invitation/Qm9v...', description: 'One-time link that sets the dashboard password; shown once' })
  url: string;
  @ApiProperty({ example: '2026-11-25T13:00:00.000Z', description: '72 h after its creation' }) expiresAt: string;
  @ApiProperty({ example: 1, description: 'Earlier links of this seller still unused, which stopped working when this one was issued' })
  revokedInvitations: number;
}

export class CreatedSellerResponse {
  @ApiProperty({ type: SellerAccountResponse }) seller: SellerAccountResponse;
  @ApiProperty({ type: KeyPairResponse }) credentials: KeyPairResponse;
  @ApiProperty({ example: 'whsec_q8W...', description: 'Key of the X-Signature HMAC of postbacks; shown once' })
  postbackSecret: string;
  @ApiProperty({ type: InvitationResponse }) invitation: InvitationResponse;
}

/** The seller account as the operator sees it: spec 2.9 plus the seller's whole fee schedule. */
export class AdminSellerResponse extends SellerAccountResponse {
  @ApiProperty({ type: FeesDto, description: 'The fee schedule in force: defaults with the seller overrides' })
  fees: FeesDto;
}

export class SettingsDto {
  @ApiProperty({ example: true, description: 'false makes every cashout answer 403 API_WITHDRAWAL_DISABLED_GLOBALLY' })
  @IsDefined()
  @IsBoolean()
  apiWithdrawalsEnabled: boolean;
}

export class SettingsResponse {
  @ApiProperty({ example: true }) apiWithdrawalsEnabled: boolean;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) updatedAt: string;
}
