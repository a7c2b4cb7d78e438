import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';

export class DeliveriesQueryDto {
  @ApiPropertyOptional({ enum: ['PENDING', 'DELIVERED', 'FAILED'] })
  @IsOptional()
  @IsIn(['PENDING', 'DELIVERED', 'FAILED'], { message: 'status must be PENDING, DELIVERED or FAILED' })
  status?: 'PENDING' | 'DELIVERED' | 'FAILED';

  @ApiPropertyOptional({ example: 50, description: '1 to 200, default 50' })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer between 1 and 200' })
  @Min(1, { message: 'limit must be an integer between 1 and 200' })
  @Max(200, { message: 'limit must be an integer between 1 and 200' })
  limit?: number;
}

export class DeliveryTryResponse {
  @ApiProperty({ example: '2026-11-22T13:00:01.000Z' }) attemptedAt: string;
  @ApiProperty({ example: 500, nullable: true, type: Number }) responseStatus: number | null;
  @ApiProperty({ example: 'answered HTTP 500', nullable: true, type: String }) error: string | null;
  @ApiProperty({ example: 35 }) durationMs: number;
}

export class DeliveryResponse {
  @ApiProperty({ example: 41 }) id: number;
  @ApiProperty({ example: '3b2f8f0e-8f7b-4a34-9d1e-6f1f0c2a9b10', description: 'X-Event-Id' }) eventId: string;
  @ApiProperty({ example: 'SALE_POSTBACK', enum: ['SALE_POSTBACK', 'SUBSCRIPTION_POSTBACK', 'WITHDRAWAL_WEBHOOK'] }) channel: string;
  @ApiProperty({ example: 'https://loja.example.com/postbacks' }) url: string;
  @ApiProperty({ example: 'PENDING', enum: ['PENDING', 'DELIVERED', 'FAILED'] }) status: 'PENDING' | 'DELIVERED' | 'FAILED';
  @ApiProperty({ example: 1 }) attempts: number;
  @ApiProperty({ example: '2026-11-22T13:00:31.000Z', nullable: true, type: String }) nextAttemptAt: string | null;
  @ApiProperty({ example: 'answered HTTP 500', nullable: true, type: String }) lastError: string | null;
  @ApiProperty({ example: '2026-11-22T13:00:00.000Z' }) createdAt: string;
  @ApiProperty({ example: null, nullable: true, type: String }) deliveredAt: string | null;
  @ApiProperty({ type: Object, description: 'The body sent' }) payload: Record<string, unknown>;
  @ApiProperty({ type: DeliveryTryResponse, isArray: true }) tries: DeliveryTryResponse[];
}

export class PostbackSecretResponse {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Signs postbacks from now on; shown once' }) postbackSecret: string;
  @ApiProperty({ type: String, nullable: true, description: 'Until when the replaced secret still signs beside it; null: it stopped now' })
  previousSecretExpiresAt: string | null;
  @ApiProperty({ description: 'true when a secret still in an earlier rotation’s window was expired by this one' }) expiredEarlierSecret: boolean;
}
