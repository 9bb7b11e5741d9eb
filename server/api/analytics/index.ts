// GET /v1/analytics/flows/{id}: where a flow's calls went, which moves they took and where they
// ended (docs/api.md#analytics), counted in the store with GROUP BY (repositories/analytics.ts);
// /sessions lists the calls that took one move. Another account's flow reads as absent.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { accountOf } from '../../http/services.ts';
import { FlowTrafficView, TransitionSessionsPage } from '../../protocol/api/analytics.ts';
import type { TrafficFilter } from '../../store/store.ts';
import { instant } from '../sessions/index.ts';

const OUTCOME_PREFIX = 'outcome.';
/** An outcome field's name, as flows declare them (settings.outcome). */
const OUTCOME_FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

const filterShape = {
  from: instant('from'),
  to: instant('to'),
  version: z
    .union([z.literal('draft'), z.string().regex(/^[1-9]\d{0,8}$/).transform(Number)], { error: 'version must be a version number or "draft"' })
    .optional(),
  success: z.enum(['true', 'false', 'unknown'], { error: 'success must be one of true, false, unknown' }).optional(),
  experiment: z.string().min(1).max(64).optional(),
  arm: z.string().regex(/^[1-9]\d{0,8}$/, { error: 'arm must be a version number' }).transform(Number).optional(),
};

/**
 * The filters, and at most one `outcome.<field>=<value>`; any other parameter is refused by name,
 * so a misspelt filter never silently counts everything.
 */
const withOutcome = <S extends z.ZodRawShape>(shape: S, names: readonly string[]) =>
  z
    .object(shape)
    .catchall(z.string().max(200, 'an outcome value is at most 200 characters'))
    .superRefine((query, ctx) => {
      const extra = Object.keys(query).filter((key) => !names.includes(key));
      for (const key of extra) {
        if (!key.startsWith(OUTCOME_PREFIX)) ctx.addIssue({ code: 'custom', path: [key], message: `${key} is not a parameter here` });
        else if (!OUTCOME_FIELD.test(key.slice(OUTCOME_PREFIX.length))) ctx.addIssue({ code: 'custom', path: [key], message: 'an outcome field is a name of letters, digits and _' });
      }
      const outcome = extra.filter((key) => key.startsWith(OUTCOME_PREFIX));
      if (outcome.length > 1) ctx.addIssue({ code: 'custom', path: [outcome[1]!], message: 'one outcome field at a time' });
    });

const TrafficQuery = withOutcome(filterShape, Object.keys(filterShape));

const Cursor = z
  .string()
  .max(300)
  .transform((text, ctx) => {
    try {
      const [createdAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [unknown, unknown];
      if (typeof createdAt === 'number' && typeof id === 'string') return { createdAt, id };
    } catch {
      // told below
    }
    ctx.addIssue({ code: 'custom', message: 'cursor must be the next_cursor of a previous page' });
    return z.NEVER;
  });

const sessionsShape = {
  ...filterShape,
  transition: z
    .string({ error: 'transition is required: <from>-><to> (->initial for the calls that started in "initial")' })
    .max(200, 'transition is at most 200 characters')
    .transform((text, ctx) => {
      const at = text.indexOf('->');
      const to = at < 0 ? '' : text.slice(at + 2);
      if (at < 0 || to === '' || to.includes('->')) {
        ctx.addIssue({ code: 'custom', message: 'transition must be <from>-><to> (->initial for the calls that started in "initial")' });
        return z.NEVER;
      }
      return { from: at === 0 ? null : text.slice(0, at), to };
    }),
  limit: z.coerce.number({ error: 'limit must be a number' }).int('limit must be a whole number').min(1, 'limit is at least 1').max(200, 'limit is at most 200').default(50),
  cursor: Cursor.optional(),
};
const SessionsQuery = withOutcome(sessionsShape, Object.keys(sessionsShape));

const FlowParams = z.object({ flow_id: z.string() });

function trafficFilter(query: Record<string, unknown> & { from?: number; to?: number; version?: number | 'draft'; success?: 'true' | 'false' | 'unknown'; experiment?: string; arm?: number }): TrafficFilter {
  const outcomeKey = Object.keys(query).find((key) => key.startsWith(OUTCOME_PREFIX));
  if (query.from !== undefined && query.to !== undefined && query.to <= query.from) {
    throw new AppError('invalid_request', 'The query is not valid: to: to must be after from.', [{ field: 'to', message: 'to must be after from' }]);
  }
  if (query.arm !== undefined && query.experiment === undefined) {
    throw new AppError('invalid_request', 'The query is not valid: arm: an arm is one of an experiment\'s; give experiment too.', [{ field: 'arm', message: 'give experiment too' }]);
  }
  return {
    ...(query.from !== undefined && { from: query.from }),
    ...(query.to !== undefined && { to: query.to }),
    ...(query.version !== undefined && { version: query.version }),
    ...(query.success !== undefined && { success: query.success }),
    ...(outcomeKey !== undefined && { outcome: { field: outcomeKey.slice(OUTCOME_PREFIX.length), value: String(query[outcomeKey]) } }),
    ...(query.experiment !== undefined && { experiment: query.experiment }),
    ...(query.arm !== undefined && { arm: query.arm }),
  };
}

const successValue = (stored: 'true' | 'false' | 'unknown' | null): boolean | 'unknown' | null => (stored === null ? null : stored === 'unknown' ? 'unknown' : stored === 'true');

export async function analyticsRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };

  const ownFlow = async (accountId: string, flowId: string) => {
    if (!(await store.flows.exists(accountId, flowId))) throw new AppError('flow_not_found', `No flow with the id "${flowId}".`);
    return { accountId, flowId };
  };

  app.get('/v1/analytics/flows/:flow_id', { config, schema: { params: FlowParams, querystring: TrafficQuery, response: { 200: FlowTrafficView } } }, async (request) => {
    const filter = trafficFilter(request.query);
    const flow = await ownFlow(accountOf(request.principal), request.params.flow_id);
    const traffic = await store.analytics.flowTraffic(flow, filter);
    return {
      flow_id: flow.flowId,
      filter: { from: filter.from ?? null, to: filter.to ?? null, version: filter.version ?? null, success: filter.success ?? null, outcome: filter.outcome ?? null, experiment: filter.experiment ?? null, arm: filter.arm ?? null },
      ...traffic,
    };
  });

  app.get(
    '/v1/analytics/flows/:flow_id/sessions',
    { config, schema: { params: FlowParams, querystring: SessionsQuery, response: { 200: TransitionSessionsPage } } },
    async (request) => {
      const { query } = request;
      const filter = trafficFilter(query);
      const flow = await ownFlow(accountOf(request.principal), request.params.flow_id);
      // One more than the page: whether there is a next one, without a count.
      const found = await store.analytics.transitionSessions(flow, query.transition, filter, query.limit + 1, query.cursor ?? null);
      const page = found.slice(0, query.limit);
      const last = page.at(-1);
      return {
        sessions: page.map((s) => ({ id: s.id, created_at: s.createdAt, started_at: s.startedAt, duration_secs: s.durationSecs, success: successValue(s.success) })),
        next_cursor: found.length > query.limit && last ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : null,
      };
    },
  );
}
