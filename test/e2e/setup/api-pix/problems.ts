import { STATUS_CODES } from 'node:http';
import { PixViolation } from './openapi';

/** An RFC 7807 body as the document's `Problema` schema. */
export interface Problema {
  type: string;
  title: string;
  status: number;
  detail?: string;
  violacoes?: Array<{ razao: string; propriedade: string; valor?: string }>;
}

/**
 * The error types the document lists ("Tratamento de erros"), with their HTTP status and meaning, for the
 * endpoints the simulator plays. `type` is `https://pix.bcb.gov.br/api/v2/error/<TipoErro>`, as it says.
 */
const TYPES = {
  RequisicaoInvalida: { status: 400, title: 'Requisição inválida.', detail: 'Requisição inválida.' },
  AcessoNegado: { status: 403, title: 'Acesso negado.', detail: 'Requisição de participante autenticado que viola alguma regra de autorização.' },
  NaoEncontrado: { status: 404, title: 'Não Encontrado', detail: 'Entidade não encontrada.' },
  ErroInternoDoServidor: { status: 500, title: 'Erro interno do servidor.', detail: 'Condição inesperada ao processar requisição.' },
  ServicoIndisponivel: {
    status: 503,
    title: 'Serviço Indisponível',
    detail: 'Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.',
  },
  IndisponibilidadePorTempoEsgotado: { status: 504, title: 'Tempo esgotado.', detail: 'Indica que o serviço demorou além do esperado para retornar.' },
  CobNaoEncontrado: { status: 404, title: 'Cobrança não encontrada.', detail: 'Cobrança não encontrada para o txid informado.' },
  CobOperacaoInvalida: {
    status: 400,
    title: 'Cobrança inválida.',
    detail: 'A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o schema ou está semanticamente errada.',
  },
  CobConsultaInvalida: { status: 400, title: 'Consulta inválida.', detail: 'Os parâmetros de consulta à cobrança não respeitam o schema.' },
  PixNaoEncontrado: { status: 404, title: 'Pix não encontrado.', detail: 'Pix não encontrado para o e2eid informado.' },
  PixDevolucaoNaoEncontrada: { status: 404, title: 'Devolução não encontrada.', detail: 'Devolução não encontrada para o e2eid informado.' },
  PixConsultaInvalida: {
    status: 400,
    title: 'Consulta inválida.',
    detail: 'Os parâmetros de consulta à lista de pix recebidos não respeitam o schema ou não fazem sentido semanticamente.',
  },
  PixDevolucaoInvalida: {
    status: 400,
    title: 'Devolução inválida.',
    detail: 'A presente requisição de devolução não respeita o schema ou não faz sentido semanticamente.',
  },
  WebhookOperacaoInvalida: {
    status: 400,
    title: 'Webhook inválido.',
    detail: 'A presente requisição busca criar um webhook sem respeitar o schema ou, ainda, apresenta semântica inválida.',
  },
  WebhookNaoEncontrado: { status: 404, title: 'Webhook não encontrado.', detail: 'O webhook denotado por {chave} não encontra-se estabelecido.' },
  // Pix Automático.
  PayloadLocationRecNaoEncontrado: { status: 404, title: 'Location não encontrada.', detail: 'Location não encontrada para o id informado.' },
  PayloadLocationRecConsultaInvalida: {
    status: 400,
    title: 'Consulta inválida.',
    detail: 'Os parâmetros de consulta à lista de locations não respeitam o schema ou não fazem sentido semanticamente.',
  },
  RecNaoEncontrada: { status: 404, title: 'Recorrência não encontrada.', detail: 'Recorrência não encontrada para o idRec informado.' },
  RecOperacaoInvalida: {
    status: 400,
    title: 'Recorrência inválida.',
    detail: 'A requisição que busca alterar ou criar uma recorrência não respeita o schema ou está semanticamente errada.',
  },
  RecConsultaInvalida: {
    status: 400,
    title: 'Consulta inválida.',
    detail: 'Os parâmetros de consulta à lista de recorrências não respeitam o schema ou não fazem sentido semanticamente.',
  },
  CobRNaoEncontrado: { status: 404, title: 'Cobrança não encontrada.', detail: 'Cobrança não encontrada para o txid informado.' },
  CobROperacaoInvalida: {
    status: 400,
    title: 'Operação inválida.',
    detail: 'A requisição que busca alterar ou criar uma cobrança recorrente não respeita o schema ou está semanticamente errada.',
  },
  CobRConsultaInvalida: {
    status: 400,
    title: 'Consulta inválida.',
    detail: 'Os parâmetros de consulta à lista de cobranças não respeitam o schema ou não fazem sentido semanticamente.',
  },
  WebhookRecOperacaoInvalida: {
    status: 400,
    title: 'Webhook inválido.',
    detail: 'A presente requisição busca criar um webhook sem respeitar o schema ou, ainda, apresenta semântica inválida.',
  },
  WebhookCobROperacaoInvalida: {
    status: 400,
    title: 'Webhook inválido.',
    detail: 'A presente requisição busca criar um webhook sem respeitar o schema ou, ainda, apresenta semântica inválida.',
  },
} as const;

export type ProblemType = keyof typeof TYPES;

/** Thrown by the PSP's rules; the server answers it as its `Problema`. */
export class PixProblem extends Error {
  constructor(
    readonly body: Problema,
    /** Extra headers (a 401 carries WWW-Authenticate). */
    readonly headers: Record<string, string> = {},
  ) {
    super(`${body.status} ${body.title}: ${body.detail ?? ''}`);
  }
}

/** A problem of one of the document's types; `detail` says which rule, `violations` which fields. */
export function problem(type: ProblemType, detail?: string, violations: PixViolation[] = []): PixProblem {
  const known = TYPES[type];
  const body: Problema = { type: `https://pix.bcb.gov.br/api/v2/error/${type}`, title: known.title, status: known.status, detail: detail ?? known.detail };
  if (violations.length > 0) body.violacoes = violations.map((v) => ({ razao: v.reason, propriedade: v.property }));
  return new PixProblem(body);
}

const GENERAL_BY_STATUS: Record<number, ProblemType> = {
  400: 'RequisicaoInvalida',
  403: 'AcessoNegado',
  404: 'NaoEncontrado',
  500: 'ErroInternoDoServidor',
  503: 'ServicoIndisponivel',
  504: 'IndisponibilidadePorTempoEsgotado',
};

/**
 * The problem any endpoint may answer with `status`: the document's general type for it, or, for a status
 * the document names none for (401, 429, 502…), RFC 7807's `about:blank` with the HTTP reason as title.
 */
export function generalProblem(status: number, detail?: string): PixProblem {
  const type = GENERAL_BY_STATUS[status];
  if (type) return problem(type, detail);
  const title = STATUS_CODES[status] ?? 'Error';
  return new PixProblem({ type: 'about:blank', title, status, detail: detail ?? title });
}
