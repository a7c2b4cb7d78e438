/**
 * `npm run ledger:verify`: proves the double-entry ledger holds, and prints it as figures: every posting
 * sums to zero, the whole ledger sums to zero, every posting's seller moves equal its entries and follow
 * the previous balance, every seller's balance (what GET /api/public/balance answers) equals its entries
 * and its last posting; and that the ledger books only money its providers hold (provider-backing.ts):
 * every sale held as paid backed by its provider's record, a PSP's returns as the ledger booked them,
 * every withdrawal paid out backed by a payout its provider made of its net amount.
 * Exits 0, or prints each problem and exits 1. Uses DATABASE_URL.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppConfigModule } from '../config/config.module';
import { DatabaseModule } from '../database/database.module';
import { LedgerModule } from './ledger.module';
import { LedgerService } from './ledger.service';
import { checkProviderBacking } from './provider-backing';

@Module({ imports: [AppConfigModule, DatabaseModule, LedgerModule] })
class LedgerVerifyModule {}

async function main(): Promise<number> {
  const app = await NestFactory.createApplicationContext(LedgerVerifyModule, { logger: ['error'] });
  try {
    const ledger = app.get(LedgerService);
    const [mismatches, sellers, report] = await Promise.all([ledger.verify(), ledger.countBalances(), ledger.doubleEntryReport()]);
    const backing = await checkProviderBacking(app.get(DataSource));
    const problems: string[] = [
      ...report.unbalancedPostings.map((p) => `posting ${p.postingId} sums to ${p.sumCents} cents, not zero`),
      ...(report.ledgerSumCents !== 0 ? [`the whole ledger sums to ${report.ledgerSumCents} cents, not zero`] : []),
      ...report.inconsistentPostings.map((id) => `posting ${id}: its seller moves differ from its entries`),
      ...(report.entriesWithoutPosting > 0 ? [`${report.entriesWithoutPosting} entries belong to no posting`] : []),
      ...report.brokenChains.map((id) => `posting ${id}: its balance before it is not the previous posting's balance after`),
      ...report.balancesOffLastPosting.map((id) => `seller ${id}: its balance is not its last posting's balance after`),
      ...mismatches.map(
        (m) =>
          `seller ${m.sellerId}: balance available ${m.availableCents} blocked ${m.blockedCents}, ` +
          `ledger available ${m.ledgerAvailableCents} blocked ${m.ledgerBlockedCents}`,
      ),
      ...backing.problems.slice(0, 50).map((p) => `${p.record} (${p.provider}): ${p.problem}`),
      ...(backing.problems.length > 50 ? [`… ${backing.problems.length - 50} more records off their provider's record`] : []),
    ];
    console.log(`ledger:verify: ${report.postings} postings, ${report.entries} entries; ${report.unbalancedPostings.length} postings off zero; the whole ledger sums to ${report.ledgerSumCents} cents`);
    console.log(`ledger:verify: ${sellers} balances, ${mismatches.length} off their entries, ${report.balancesOffLastPosting.length} off their last posting (GET /api/public/balance reads these rows)`);
    console.log(`ledger:verify: accounts ${report.accounts.map((a) => `${a.account}${a.provider ? `(${a.provider})` : ''} ${a.sumCents}`).join(', ')}`);
    const held = backing.heldAsPaid.map((h) => `${h.provider} ${h.sales} (${h.cents} cents)`).join(', ') || 'none';
    console.log(`ledger:verify: sales held as paid, by provider: ${held}; ${backing.problems.length} not backed by their provider's record or off their returns`);
    const paidOut = backing.paidOut.map((p) => `${p.provider} ${p.withdrawals} (${p.cents} cents)`).join(', ') || 'none';
    console.log(`ledger:verify: withdrawals paid out, by provider: ${paidOut}`);
    console.log(
      `ledger:verify: returns of PSP sales compared with the ledger: ${backing.returnsCompared.returns} returns of ${backing.returnsCompared.sales} sales, ${backing.returnsCompared.cents} cents completed`,
    );
    if (problems.length === 0) {
      console.log("ledger:verify: every posting sums to zero, every balance equals its entries, every paid sale and paid-out withdrawal is backed by its provider's record");
      return 0;
    }
    for (const problem of problems) console.error(`ledger:verify: ${problem}`);
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
