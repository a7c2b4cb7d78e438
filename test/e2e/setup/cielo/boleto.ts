/**
 * The bar code (44 digits) and digitable line of a Bradesco boleto (bank 237, carteira 09) as the simulated
 * `Simulado` provider answers them (ref §9): FEBRABAN layout, check digits right, so a parser accepts them.
 */
const BASE_DATE = Date.UTC(1997, 9, 7);

export function boletoNumbers(amountCents: number, dueDate: string, nossoNumero: string): { BarCodeNumber: string; DigitableLine: string } {
  const free = `1234${'09'}${nossoNumero.padStart(11, '0').slice(-11)}${'0012345'}0`;
  const factor = dueFactor(dueDate);
  const amount = String(amountCents).padStart(10, '0').slice(-10);
  const withoutDv = `2379${factor}${amount}${free}`;
  const dv = mod11(withoutDv);
  const barcode = `${withoutDv.slice(0, 4)}${dv}${withoutDv.slice(4)}`;
  const field1 = `2379${free.slice(0, 5)}`;
  const field2 = free.slice(5, 15);
  const field3 = free.slice(15, 25);
  const line = [
    `${field1.slice(0, 5)}.${field1.slice(5)}${mod10(field1)}`,
    `${field2.slice(0, 5)}.${field2.slice(5)}${mod10(field2)}`,
    `${field3.slice(0, 5)}.${field3.slice(5)}${mod10(field3)}`,
    dv,
    `${factor}${amount}`,
  ].join(' ');
  return { BarCodeNumber: barcode, DigitableLine: line };
}

/** Days since 1997-10-07, restarting at 1000 after 9999 (FEBRABAN, from 2025-02-22). */
function dueFactor(dueDate: string): string {
  const days = Math.round((Date.parse(`${dueDate}T00:00:00Z`) - BASE_DATE) / 86_400_000);
  const factor = days > 9999 ? ((days - 10000) % 9000) + 1000 : days;
  return String(factor).padStart(4, '0');
}

function mod10(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    const product = Number(digits[i]) * weight;
    sum += product > 9 ? Math.floor(product / 10) + (product % 10) : product;
    weight = weight === 2 ? 1 : 2;
  }
  const rest = sum % 10;
  return String(rest === 0 ? 0 : 10 - rest);
}

function mod11(digits: string): string {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    sum += Number(digits[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const dv = 11 - (sum % 11);
  return String(dv === 0 || dv === 10 || dv === 11 ? 1 : dv);
}
