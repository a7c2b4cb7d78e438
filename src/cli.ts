/**
 * Operator CLI (platform.md §2), the same operations as the operator API:
 *   npm run cli -- seller:create --name "Loja" --email loja@example.com [--phone 11987654321]
 *                 [--commercial-name "Loja"] [--document-type cpf|cnpj --document-number 52998224725]
 *   npm run cli -- seller:invite --seller-id 1   (a new one-time dashboard invitation link)
 *   npm run cli -- api-keys:create --seller-id 1
 *   npm run cli -- api-keys:revoke --public-key pk_...
 *   npm run cli -- secrets:reencrypt        (after rotating ENCRYPTION_KEY, with the old key in ENCRYPTION_KEYS)
 * Prints the same JSON as the matching route; on an error prints one line to stderr and exits 1.
 */
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { NestFactory } from '@nestjs/core';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { CreateSellerDto } from './admin/dto/seller-input.dto';
import { ApiKeysService } from './auth/api-keys.service';
import { CliModule } from './cli.module';
import { collectFieldErrors } from './common/pipes/validation.pipe';
import { validateEnvironment } from './config/env.schema';
import { prepareDatabase } from './database/prepare-database';
import { DomainError } from './domain/domain-error';
import { AppConfig } from './config/app-config';
import { resealCardTokens } from './payments/stored-card-token';
import { SellerService } from './seller/seller.service';
import { SubscriptionsRepository } from './subscriptions/subscriptions.repository';

const USAGE = 'usage: cli seller:create --name NAME --email EMAIL [--phone DIGITS] [--commercial-name NAME] ' +
  '[--document-type cpf|cnpj --document-number DIGITS] | seller:invite --seller-id ID | api-keys:create --seller-id ID | api-keys:revoke --public-key PK | secrets:reencrypt';

async function main(argv: string[]): Promise<unknown> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      email: { type: 'string' },
      phone: { type: 'string' },
      'commercial-name': { type: 'string' },
      'document-type': { type: 'string' },
      'document-number': { type: 'string' },
      'seller-id': { type: 'string' },
      'public-key': { type: 'string' },
    },
  });
  const command = positionals[0];
  if (!['seller:create', 'seller:invite', 'api-keys:create', 'api-keys:revoke', 'secrets:reencrypt'].includes(command ?? '')) throw new Error(USAGE);

  const env = validateEnvironment(process.env);
  await prepareDatabase(env.DATABASE_URL);
  const app = await NestFactory.createApplicationContext(CliModule, { logger: ['error'] });
  try {
    if (command === 'seller:create') {
      const input = plainToInstance(CreateSellerDto, {
        name: values.name,
        email: values.email,
        phone: values.phone,
        commercialName: values['commercial-name'],
        document: values['document-type'] ? { type: values['document-type'], number: values['document-number'] } : undefined,
      });
      const errors = collectFieldErrors(await validate(input, { whitelist: true }));
      if (errors.missing.length > 0) throw new Error(`missing: ${errors.missing.map((f) => `--${f}`).join(', ')}`);
      if (errors.invalid.length > 0) throw new Error(`${errors.invalid[0].field}: ${errors.invalid[0].message}`);
      return await app.get(SellerService).create(input);
    }
    if (command === 'api-keys:create' || command === 'seller:invite') {
      const sellerId = Number(values['seller-id']);
      if (!Number.isSafeInteger(sellerId) || sellerId < 1) throw new Error('--seller-id must be a positive integer');
      if (command === 'seller:invite') return { invitation: await app.get(SellerService).invite(sellerId) };
      return await app.get(SellerService).issueKeyPair(sellerId);
    }
    if (command === 'secrets:reencrypt') {
      // Postback secrets, then the card tokens of subscriptions (Cielo's CardToken): everything sealed with ENCRYPTION_KEY.
      const postbackSecrets = await app.get(SellerService).reencryptSecrets();
      return { postbackSecrets, cardTokens: await resealCardTokens(app.get(SubscriptionsRepository), app.get(AppConfig)) };
    }
    if (!values['public-key']) throw new Error('--public-key is required');
    const propagation = await app.get(ApiKeysService).revoke(values['public-key']);
    // Saved but not announced: the running instances may accept the pair until their cache expires.
    if (!propagation.announced) throw new NotAnnounced(`revoked ${values['public-key']}, but ${propagation.warning ?? 'not announced'}`);
    return { revoked: values['public-key'] };
  } finally {
    await app.close();
  }
}

/** A change saved in PostgreSQL whose announcement to the running instances failed: exit code 3. */
class NotAnnounced extends Error {}

main(process.argv.slice(2))
  .then((result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.exit(0);
  })
  .catch((error: Error) => {
    const prefix = error instanceof DomainError ? `${error.code}: ` : '';
    process.stderr.write(`${prefix}${error.message.split('\n')[0]}\n`);
    process.exit(error instanceof NotAnnounced ? 3 : 1);
  });
