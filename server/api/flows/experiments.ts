// A/B experiments between a flow's published versions (docs/api.md#experiments). While one runs,
// each new real session of the flow is given an arm by weight (VoiceEngine.experimentArm: sticky
// per caller id) and runs that version; stopping it ends the assignments (sessions keep their arm),
// and concluding it stops it and publishes the winner, through the versions API's own publish.
// Results are counted by the store with SQL aggregates over the sessions that recorded the arm.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { accountOf } from '../../http/services.ts';
import { ExperimentDetail, ExperimentView } from '../../protocol/api/experiments.ts';
import type { Experiment, ExperimentResults, Flow } from '../../store/store.ts';
import { authorOf, publishAgain } from './versions.ts';

/** Arms an experiment may have, and the largest weight: a share is weight over the sum. */
export const MAX_ARMS = 10;
export const MAX_WEIGHT = 1000;
/** z for a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

const VersionNumber = z.number({ error: 'must be a version number' }).int('must be a whole number').min(1, 'versions start at 1');
const CreateExperimentBody = z.strictObject(
  {
    name: z.string({ error: 'name must be text' }).trim().min(1, 'name must not be empty').max(200, 'name is at most 200 characters'),
    arms: z
      .array(
        z.strictObject(
          {
            version: VersionNumber,
            weight: z
              .number({ error: 'weight must be a number' })
              .int('weight must be a whole number')
              .min(1, 'weight must be at least 1')
              .max(MAX_WEIGHT, `weight is at most ${MAX_WEIGHT}`),
          },
          { error: 'each arm is {version, weight} and nothing else' },
        ),
        { error: 'arms must be a list of {version, weight}' },
      )
      .min(2, 'an experiment has at least two arms')
      .max(MAX_ARMS, `an experiment has at most ${MAX_ARMS} arms`)
      .refine((arms) => new Set(arms.map((arm) => arm.version)).size === arms.length, { message: 'each version may be one arm only' }),
  },
  { error: 'the body is {name, arms} and nothing else' },
);
const ConcludeBody = z.strictObject({ winner: VersionNumber }, { error: 'the body is {winner} and nothing else' });
const FlowParams = z.object({ flow_id: z.string() });
const ExperimentParams = z.object({ flow_id: z.string(), experiment_id: z.string() });

/**
 * The 95 % Wilson score interval of `successes` out of `trials` (null with none): unlike the
 * normal approximation it stays inside 0..1 and is honest about small samples.
 */
export function wilsonInterval(successes: number, trials: number): { rate: number; low: number; high: number } | null {
  if (trials <= 0) return null;
  const p = successes / trials;
  const z2 = Z95 * Z95;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (Z95 * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { rate: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

function statusOf(experiment: Experiment): 'running' | 'stopped' | 'concluded' {
  return experiment.winner !== null ? 'concluded' : experiment.stoppedAt !== null ? 'stopped' : 'running';
}

function experimentView(experiment: Experiment): z.infer<typeof ExperimentView> {
  return {
    id: experiment.id,
    flow_id: experiment.flowId,
    name: experiment.name,
    arms: experiment.arms.map((arm) => ({ version: arm.version, weight: arm.weight })),
    status: statusOf(experiment),
    created_at: experiment.createdAt,
    stopped_at: experiment.stoppedAt,
    winner: experiment.winner,
  };
}

function resultsView(experiment: Experiment, results: ExperimentResults): z.infer<typeof ExperimentDetail>['results'] {
  return experiment.arms.map((arm) => {
    const totals = results.arms.find((t) => t.version === arm.version);
    const calls = totals?.calls ?? 0;
    const succeeded = totals?.succeeded ?? 0;
    const failed = totals?.failed ?? 0;
    const outcomes: Record<string, { present: number; values?: Record<string, number> }> = {};
    for (const count of results.outcomes.filter((o) => o.version === arm.version)) {
      const field = (outcomes[count.field] ??= { present: 0 });
      field.present += count.count;
      if (count.value !== null) (field.values ??= {})[count.value] = (field.values[count.value] ?? 0) + count.count;
    }
    const states: Record<string, { calls: number; share: number }> = {};
    for (const count of results.states.filter((s) => s.version === arm.version)) {
      states[count.state] = { calls: count.calls, share: calls > 0 ? count.calls / calls : 0 };
    }
    return {
      version: arm.version,
      weight: arm.weight,
      sessions: totals?.sessions ?? 0,
      calls,
      success: { true: succeeded, false: failed, unknown: totals?.unknown ?? 0, rate: wilsonInterval(succeeded, succeeded + failed) },
      average_duration_secs: totals?.averageDurationSecs ?? null,
      average_cost_usd_cents: totals?.averageCostCents ?? null,
      outcomes,
      states,
    };
  });
}

export async function experimentRoutes(server: FastifyInstance, { ownFlow }: { ownFlow(accountId: string, id: string): Promise<Flow> }): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs } = app.services;
  // Written like the flow's other writes (the studio, or a backend's API key), and read alike.
  const config = { auth: 'jwt_or_api_key' as const };

  const ownExperiment = async (accountId: string, flowId: string, id: string): Promise<{ flow: Flow; experiment: Experiment }> => {
    const flow = await ownFlow(accountId, flowId);
    const experiment = await store.experiments.get(accountId, flow.id, id);
    if (!experiment) throw new AppError('experiment_not_found', `The flow "${flow.id}" has no experiment with the id "${id}".`);
    return { flow, experiment };
  };

  /** The outcome fields the arms' versions declare as boolean or enum: their values are counted each. */
  const enumFieldsOf = async (accountId: string, flowId: string, experiment: Experiment): Promise<string[]> => {
    const names = new Set<string>();
    for (const arm of experiment.arms) {
      const version = await store.flowVersions.get(accountId, flowId, arm.version);
      if (!version) continue;
      const document = JSON.parse(await flowJobs.toJsonText(accountId, version.yamlContent)) as { settings?: { outcome?: Record<string, { type?: string }> } } | null;
      for (const [name, field] of Object.entries(document?.settings?.outcome ?? {})) if (field?.type === 'enum') names.add(name);
    }
    return [...names];
  };

  app.post(
    '/v1/flows/:flow_id/experiments',
    { config, schema: { params: FlowParams, body: CreateExperimentBody, response: { 201: ExperimentView } } },
    async (request, reply) => {
      const accountId = accountOf(request.principal);
      const flow = await ownFlow(accountId, request.params.flow_id);
      const { body } = request;
      // Every version in the history was published once; a draft is no version and never takes real calls.
      const versions = new Set(((await store.flowVersions.list(accountId, flow.id)) ?? []).map((v) => v.number));
      const missing = body.arms.filter((arm) => !versions.has(arm.version)).map((arm) => arm.version);
      if (missing.length > 0) {
        throw new AppError(
          'version_not_published',
          `This flow has no published version ${missing.join(', ')} (its versions: ${[...versions].sort((a, b) => a - b).join(', ')}); publish the draft first to test it.`,
          missing.map((version) => ({ field: 'arms', version })),
        );
      }
      const made = await store.experiments.create({ accountId, flowId: flow.id, name: body.name, arms: body.arms });
      if (made === 'running') {
        const running = await store.experiments.running(accountId, flow.id);
        throw new AppError('experiment_running', `This flow already runs the experiment "${running?.name ?? '?'}" (${running?.id ?? '?'}): stop or conclude it first.`);
      }
      return reply.status(201).send(experimentView(made));
    },
  );

  app.get('/v1/flows/:flow_id/experiments', { config, schema: { params: FlowParams, response: { 200: z.array(ExperimentView) } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    return (await store.experiments.list(accountId, flow.id)).map(experimentView);
  });

  app.get('/v1/flows/:flow_id/experiments/:experiment_id', { config, schema: { params: ExperimentParams, response: { 200: ExperimentDetail } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const { experiment } = await ownExperiment(accountId, request.params.flow_id, request.params.experiment_id);
    const results = await store.experiments.results(experiment.id, await enumFieldsOf(accountId, experiment.flowId, experiment));
    return { ...experimentView(experiment), results: resultsView(experiment, results) };
  });

  // No more sessions get an arm; those that have one keep it. Stopping a stopped one changes nothing.
  app.post('/v1/flows/:flow_id/experiments/:experiment_id/stop', { config, schema: { params: ExperimentParams, response: { 200: ExperimentView } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const { experiment } = await ownExperiment(accountId, request.params.flow_id, request.params.experiment_id);
    const stopped = await store.experiments.stop(accountId, experiment.flowId, experiment.id, null);
    if (!stopped) throw new AppError('experiment_not_found', `The flow has no experiment with the id "${experiment.id}".`);
    return experimentView(stopped);
  });

  // Stops it (if it still runs) and publishes the winner as the flow's version, as a rollback
  // does: a copy of that version becomes the newest, unless it is the published one already.
  app.post(
    '/v1/flows/:flow_id/experiments/:experiment_id/conclude',
    { config, schema: { params: ExperimentParams, body: ConcludeBody, response: { 200: ExperimentView } } },
    async (request) => {
      const accountId = accountOf(request.principal);
      const { flow, experiment } = await ownExperiment(accountId, request.params.flow_id, request.params.experiment_id);
      const { winner } = request.body;
      if (experiment.winner !== null) throw new AppError('experiment_concluded', `This experiment was concluded already, with version ${experiment.winner} the winner.`);
      if (!experiment.arms.some((arm) => arm.version === winner)) {
        throw new AppError('invalid_request', `winner must be one of the experiment's arms: ${experiment.arms.map((arm) => arm.version).join(', ')}.`, [{ field: 'winner', message: 'not an arm of this experiment' }]);
      }
      if (flow.publishedVersion !== winner) {
        const version = await store.flowVersions.get(accountId, flow.id, winner);
        if (!version) throw new AppError('flow_version_not_found', `This flow has no version ${winner}.`);
        const published = await publishAgain(app.services, accountId, flow.id, version, `Won the experiment "${experiment.name}" (version ${winner})`, authorOf(request.principal));
        if (!published.ok) throw new AppError('flow_not_found', `No flow with the id "${flow.id}".`);
      }
      const concluded = await store.experiments.stop(accountId, flow.id, experiment.id, winner);
      if (!concluded) throw new AppError('experiment_not_found', `The flow has no experiment with the id "${experiment.id}".`);
      return experimentView(concluded);
    },
  );
}
