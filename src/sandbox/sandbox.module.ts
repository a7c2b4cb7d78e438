import { Module } from '@nestjs/common';
import { SalesModule } from '../sales/sales.module';
import { SandboxController } from './sandbox.controller';

@Module({
  imports: [SalesModule],
  controllers: [SandboxController],
})
export class SandboxModule {}
