import { pixQrCodeDataUri } from './pix-qr-code';

/** Runs in PixQrCodeRenderer's worker threads: the data URI of one BR Code. */
export function render(brCode: string): string {
  return pixQrCodeDataUri(brCode);
}
