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
  /** DevolucaoNatureza: a receiver's request (ORIGINAL, RETIRADA), or a return the PSP makes on its own in a MED. */
  natureza?: 'ORIGINAL' | 'RETIRADA' | 'MED_OPERACIONAL' | 'MED_FRAUDE' | 'MED_PIX_AUTOMATICO';
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

/* Pix Automático (`/locrec`, `/rec`, `/cobr`, `/webhookrec`, `/webhookcobr`). */

export type RecStatus = 'CRIADA' | 'APROVADA' | 'REJEITADA' | 'EXPIRADA' | 'CANCELADA';
export type Periodicidade = 'SEMANAL' | 'MENSAL' | 'TRIMESTRAL' | 'SEMESTRAL' | 'ANUAL';
export type PoliticaRetentativa = 'NAO_PERMITE' | 'PERMITE_3R_7D';
export type TipoJornada = 'JORNADA_1' | 'JORNADA_2' | 'JORNADA_3' | 'JORNADA_4' | 'AGUARDANDO_DEFINICAO';
/** Who ended a recurrence or a recurring charge (`encerramento.cancelamento.solicitante`). */
export type Solicitante = 'PSP_PAGADOR' | 'USUARIO_PAGADOR' | 'PSP_RECEBEDOR' | 'USUARIO_RECEBEDOR';
/** The catalog's codes the document allows for a recurrence's cancellation and rejection. */
export type RecCancelamentoCodigo = 'ACCL' | 'CPCL' | 'DCSD' | 'ERSL' | 'FRUD' | 'PCFD' | 'SLCR' | 'SLDB';
export type RecRejeicaoCodigo = 'AP13' | 'AP14';
export type CobRStatus = 'CRIADA' | 'ATIVA' | 'CONCLUIDA' | 'EXPIRADA' | 'REJEITADA' | 'CANCELADA';
export type TentativaStatus = 'SOLICITADA' | 'AGENDADA' | 'PAGA' | 'CANCELADA' | 'REJEITADA' | 'EXPIRADA';
export type TentativaTipo = 'AGND' | 'NTAG' | 'RIFL';
export type CobRCancelamentoCodigo = 'ACCT' | 'BLCK' | 'CCLD' | 'FAIL' | 'OTHR' | 'SLBD' | 'SLCR';
export type CobRRejeicaoCodigo =
  | 'AB10'
  | 'AC05'
  | 'AC06'
  | 'AM02'
  | 'AM09'
  | 'DENC'
  | 'DS27'
  | 'DTED'
  | 'DTNT'
  | 'FBRD'
  | 'IRNT'
  | 'MIDI'
  | 'MSUC'
  | 'NIEC'
  | 'NIPA'
  | 'NITX'
  | 'QUNT'
  | 'RC09'
  | 'UDEI';

/** `vinculo.devedor`: a CPF or a CNPJ, and a name. */
export interface PessoaRecorrencia {
  cpf?: string;
  cnpj?: string;
  nome: string;
}

export interface RecVinculo {
  objeto?: string;
  devedor: PessoaRecorrencia;
  contrato: string;
}

export interface RecCalendario {
  dataInicial: string;
  dataFinal?: string;
  periodicidade: Periodicidade;
}

export interface RecValor {
  valorRec?: string;
  valorMinimoRecebedor?: string;
}

/** `RecSolicitada`: the body of POST /rec. */
export interface RecSolicitada {
  vinculo: RecVinculo;
  calendario: RecCalendario;
  valor?: RecValor;
  recebedor?: { convenio?: string };
  politicaRetentativa: PoliticaRetentativa;
  loc?: number;
  ativacao?: { dadosJornada?: { txid: string } };
}

/** `RecRevisada`: the body of PATCH /rec/{idRec}. */
export interface RecRevisada {
  status?: 'CANCELADA';
  vinculo?: { devedor?: { nome: string } };
  loc?: number;
  calendario?: { dataInicial?: string };
  ativacao?: { dadosJornada?: { txid: string } };
}

/** `PayloadLocationRecCompleta`. */
export interface LocRec {
  id: number;
  location: string;
  criacao: string;
  idRec?: string;
}

export type RecEncerramento =
  | { rejeicao: { codigo: RecRejeicaoCodigo; descricao: string } }
  | { cancelamento: { solicitante: Solicitante; codigo: RecCancelamentoCodigo; descricao: string } };

/** `RecCompleta` (GET /rec/{idRec}); POST and PATCH answer the same fields but `pagador` and `dadosQR`. */
export interface RecCompleta {
  idRec: string;
  vinculo: RecVinculo;
  calendario: RecCalendario;
  valor?: RecValor;
  recebedor: { cnpj: string; nome: string; convenio?: string };
  pagador?: { ispbParticipante: string; codMun?: string; cpf?: string; cnpj?: string };
  status: RecStatus;
  politicaRetentativa: PoliticaRetentativa;
  loc?: LocRec;
  atualizacao: Array<{ status: RecStatus; data: string }>;
  encerramento?: RecEncerramento;
  ativacao: { tipoJornada: TipoJornada; dadosJornada?: { txid: string } };
  dadosQR?: { jornada: 'JORNADA_2' | 'JORNADA_3' | 'JORNADA_4'; pixCopiaECola: string };
}

/** `DadosBancariosRecebedor`: the receiver's account a recurring charge credits. */
export interface DadosBancariosRecebedor {
  conta: string;
  tipoConta: 'CORRENTE' | 'POUPANCA' | 'PAGAMENTO';
  agencia?: string;
}

export interface DevedorRecorrencia {
  email?: string;
  logradouro?: string;
  cidade?: string;
  uf?: string;
  cep?: string;
}

/** `CobRSolicitada`: the body of PUT /cobr/{txid}. */
export interface CobRSolicitada {
  idRec: string;
  infoAdicional?: string;
  calendario: { dataDeVencimento: string };
  valor: { original: string };
  ajusteDiaUtil: boolean;
  recebedor: DadosBancariosRecebedor;
  devedor?: DevedorRecorrencia;
}

export interface Tentativa {
  dataLiquidacao: string;
  tipo: TentativaTipo;
  status: TentativaStatus;
  endToEndId: string;
  atualizacao: Array<{ status: TentativaStatus; data: string }>;
  rejeicao?: { codigo: CobRRejeicaoCodigo; descricao: string };
}

/** `PixAutomatico`: the Pix that settled an attempt. */
export interface PixAutomatico {
  endToEndId: string;
  txid: string;
  valor: string;
  horario: string;
  infoPagador?: string;
}

export type CobREncerramento =
  | { cancelamento: { solicitante: Solicitante; codigo: CobRCancelamentoCodigo; descricao: string } }
  | { rejeicao: { codigo: CobRRejeicaoCodigo; descricao: string } };

/** `CobRCompleta` (GET /cobr/{txid}); PUT and PATCH answer the same fields (`CobRGerada` plus the extras its examples show). */
export interface CobRCompleta {
  idRec: string;
  txid: string;
  infoAdicional?: string;
  calendario: { criacao: string; dataDeVencimento: string };
  valor: { original: string };
  ajusteDiaUtil: boolean;
  recebedor: DadosBancariosRecebedor & { cnpj: string; nome: string };
  devedor?: DevedorRecorrencia;
  status: CobRStatus;
  politicaRetentativa: PoliticaRetentativa;
  atualizacao: Array<{ status: CobRStatus; data: string }>;
  encerramento?: CobREncerramento;
  tentativas: Tentativa[];
  pix?: PixAutomatico[];
}

export interface RecNotification {
  idRec: string;
  status: RecStatus;
  atualizacao: RecCompleta['atualizacao'];
  encerramento?: RecEncerramento;
  ativacao: RecCompleta['ativacao'];
}

export interface CobRNotification {
  idRec: string;
  txid: string;
  status: CobRStatus;
  atualizacao: CobRCompleta['atualizacao'];
  encerramento?: CobREncerramento;
  tentativas: Tentativa[];
  pix?: PixAutomatico[];
}

/** `WebhookRecCompleto` and `WebhookCobRCompleto`. */
export interface WebhookAutomaticoCompleto {
  webhookUrl: string;
  criacao: string;
}

export interface RecsConsultadas {
  parametros: { inicio: string; fim: string; paginacao: Paginacao } & Record<string, unknown>;
  recs: RecCompleta[];
}

export interface CobsRConsultadas {
  parametros: { inicio: string; fim: string; paginacao: Paginacao } & Record<string, unknown>;
  cobsr: CobRCompleta[];
}
