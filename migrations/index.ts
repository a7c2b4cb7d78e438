/** Every migration, oldest first. A new migration is appended here; an applied one is never edited. */
import { CreateSellerAccounts1795355367704 } from './1795355367704-CreateSellerAccounts';

export const MIGRATIONS = [CreateSellerAccounts1795355367704];
