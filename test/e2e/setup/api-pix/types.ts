/**
 * The document's shapes the simulator handles, as TypeScript (the fields it uses; the document stays the
 * judge of the JSON through openapi.ts). Names are the document's.
 */
export type CobStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
export type DevolucaoStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
export type RefundOutcome = Exclude<DevolucaoStatus, 'EM_PROCESSAMENTO'>;

export interface Devedor {
  cpf?: string;
  cnpj?: string;
  nome: string;
}

export interface CobValor {
  original: string;
  /** 1: the payer may change the amount. */
  modalidadeAlteracao?: number;
}

export interface InfoAdicional {
  nome: string;
  valor: string;
}

/** `CobSolicitada` (PUT) and `CobRevisada` (PATCH): what the receiver may set. */
export interface CobSolicitada {
  calendario?: { expiracao?: number };
  devedor?: Devedor;
  loc?: { id: number };
  valor?: CobValor;
  chave?: string;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
  status?: 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
}

export interface CobGerada {
  calendario: { criacao: string; expiracao: number };
  txid: string;
  revisao: number;
  loc: { id: number; txid: string; location: string; tipoCob: 'cob'; criacao: string };
  location: string;
  status: CobStatus;
  devedor?: Devedor;
  valor: CobValor;
  chave: string;
  solicitacaoPagador?: string;
  infoAdicionais?: InfoAdicional[];
  pixCopiaECola: string;
}

export interface CobCompleta extends CobGerada {
  pix?: Pix[];
}

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA';
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: DevolucaoStatus;
  motivo?: string;
}

export interface DevolucaoSolicitada {
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA';
  descricao?: string;
}

export interface Pix {
  endToEndId: string;
  txid?: string;
  valor: string;
  chave?: string;
  horario: string;
  infoPagador?: string;
  devolucoes?: Devolucao[];
}

export interface Paginacao {
  paginaAtual: number;
  itensPorPagina: number;
  quantidadeDePaginas: number;
  quantidadeTotalDeItens: number;
}

export interface PixConsultados {
  parametros: { inicio: string; fim: string; paginacao: Paginacao } & Record<string, unknown>;
  pix: Pix[];
}

/** `WebhookCompleto`: the schema requires the receiver's `cnpj`; the document's example shows `chave`. */
export interface WebhookCompleto {
  webhookUrl: string;
  chave: string;
  cnpj: string;
  criacao: string;
}
