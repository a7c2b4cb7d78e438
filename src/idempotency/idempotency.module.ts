import { Module } from '@nestjs/common';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyScheduler } from './idempotency.scheduler';
import { IdempotencyService } from './idempotency.service';

@Module({
  providers: [IdempotencyService, IdempotencyRepository, IdempotencyScheduler],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
