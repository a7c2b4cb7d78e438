import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsIn, IsUrl, MaxLength } from 'class-validator';

export class CreateWebhookDto {
  @ApiProperty({ example: 'https://loja.example.com/webhooks/withdrawals', description: 'http or https URL' })
  @IsDefined()
  @MaxLength(2048)
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, { message: 'url must be an http or https URL' })
  url: string;

  @ApiProperty({ example: 'WITHDRAWAL', enum: ['WITHDRAWAL'] })
  @IsDefined()
  @IsIn(['WITHDRAWAL'], { message: 'type must be WITHDRAWAL' })
  type: 'WITHDRAWAL';
}

export class WebhookResponse {
  @ApiProperty({ example: 3 }) id: number;
  @ApiProperty({ example: 'https://loja.example.com/webhooks/withdrawals' }) url: string;
  @ApiProperty({ example: 'WITHDRAWAL', enum: ['WITHDRAWAL'] }) type: 'WITHDRAWAL';
}
