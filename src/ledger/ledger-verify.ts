/**
 * `npm run ledger:verify`: proves that every seller's balance equals the sum of its ledger entries.
 * Prints one line and exits 0, or prints each mismatch and exits 1. Uses DATABASE_URL.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { LedgerModule } from './ledger.module';
import { LedgerService } from './ledger.service';

@Module({ imports: [AppConfigModule, DatabaseModule, LedgerModule] })
class LedgerVerifyModule {}

async function main(): Promise<number> {
  const app = await NestFactory.createApplicationContext(LedgerVerifyModule, { logger: ['error'] });
  try {
    const ledger = app.get(LedgerService);
    const [mismatches, sellers] = await Promise.all([ledger.verify(), ledger.countBalances()]);
    if (mismatches.length === 0) {
      console.log(`ledger:verify: ${sellers} balances, each equal to the sum of its ledger entries`);
      return 0;
    }
    for (const m of mismatches) {
      console.error(
        `ledger:verify: seller ${m.sellerId}: balance available ${m.availableCents} blocked ${m.blockedCents}, ` +
          `ledger available ${m.ledgerAvailableCents} blocked ${m.ledgerBlockedCents}`,
      );
    }
    return 1;
  } finally {
    await app.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    console.error(`ledger:verify: ${error.message.split('\n')[0]}`);
    process.exit(2);
  },
);
