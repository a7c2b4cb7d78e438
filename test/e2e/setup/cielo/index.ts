/** The Cielo API E-commerce 3.0 simulator for e2e tests: transactional, query and MPI hosts on HTTPS with a test CA, judged by cielo-ecommerce-3.0.schemas.json. */
export { makeCertificates } from '../api-pix/certificates';
export { CieloSimulator } from './simulator';
export type {
  CieloCertificates,
  CieloDelivery,
  CieloHost,
  CieloMpiOptions,
  CieloNotification,
  CieloOperation,
  CieloPayment,
  CieloRecordedRequest,
  CieloSimulatorOptions,
} from './simulator';
export { approvedOutcome, eciAuthenticated, luhnValid, maskPan, MPI_TEST_CARDS, sandboxCard, SANDBOX_DENIALS } from './cards';
export type { CieloBrand, CieloOutcome, MpiEvent } from './cards';
export { validateCielo } from './schemas';
export type { CieloSchemaName } from './schemas';
