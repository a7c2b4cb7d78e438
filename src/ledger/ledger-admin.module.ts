import { Module } from '@nestjs/common';
import { LedgerAdminController } from './ledger-admin.controller';
import { LedgerModule } from './ledger.module';

/** The operator's ledger routes, apart from LedgerModule so that ledger:verify's context has no HTTP part. */
@Module({ imports: [LedgerModule], controllers: [LedgerAdminController] })
export class LedgerAdminModule {}
