/** The API Pix simulator for e2e tests: a receiving PSP on mutual TLS, judged by the BCB's document; with Efí's Pix send API (efi-send.ts) when asked. */
export { makeCertificates } from './certificates';
export type { PixCertificates } from './certificates';
export { ApiPixSimulator } from './simulator';
export type { ApiPixSimulatorOptions, FailOptions, LoggedRequest, Notify, PayOptions, RecurrenceActionOptions, SettleOptions, UnknownPixOptions } from './simulator';
export type { ChargeWindow, PayerPsp } from './automatic';
export type { CallbackDelivery } from './callbacks';
export { validateRequest, validateResponse, validateWebhookBody } from './openapi';
export type { WebhookKind } from './openapi';
export type { RequestParts } from './openapi';
export type { Problema } from './problems';
export type * from './types';
export { EFI_HOMOLOGATION_KEY, EFI_ISPB, EFI_REFUSALS, EFI_SCOPES, EFI_SEND_PATH, EfiSendSimulator, validateEfi } from './efi-send';
export type {
  EfiApiVersion,
  EfiAutoSettle,
  EfiCallback,
  EfiErro,
  EfiFinalStatus,
  EfiKeyOwner,
  EfiNotify,
  EfiRecordedRequest,
  EfiRefusalName,
  EfiRefusalSpec,
  EfiSchemaName,
  EfiSendOptions,
  EfiSendStatus,
  SendRequestBody,
  SentPix,
} from './efi-send';
