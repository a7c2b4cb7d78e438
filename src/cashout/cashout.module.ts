import { Module } from '@nestjs/common';

/** Filled by its own issue; present so the module layout of the design is complete. */
@Module({})
export class CashoutModule {}
