import * as QRCode from 'qrcode';
import { qrPng } from '../domain/qr-png';

/** Quiet zone of the QR code standard, in modules. */
const MARGIN_MODULES = 4;
/** Pixels per module: a 25-character BR Code (version 9 to 11, 53 to 61 modules) comes out about 320 to 370 px wide. */
const PIXELS_PER_MODULE = 6;

/** The PNG data URI of a PIX BR Code (qrCodeBase64): error correction M, a 1-bit PNG (see domain/qr-png.ts). */
export function pixQrCodeDataUri(brCode: string): string {
  const { modules } = QRCode.create(brCode, { errorCorrectionLevel: 'M' });
  const png = qrPng(modules, { scale: PIXELS_PER_MODULE, margin: MARGIN_MODULES });
  return `data:image/png;base64,${png.toString('base64')}`;
}
