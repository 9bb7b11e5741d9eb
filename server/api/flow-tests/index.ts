// Flow tests (docs/testing.md): YAML tests stored with their flow, imported and exported as suite
// files, and run as jobs (runs.ts). Another account's flow is a 404, as everywhere. Tests are
// parsed and checked against the flow in the flow-job workers, never on this thread.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import { suiteText, splitSuite, type TestDiagnostic } from '../../flow/tests-format.ts';
import { accountOf } from '../../http/services.ts';
import { mediaBody, noBody } from '../../http/api-contract.ts';
import { FlowTestView, ImportedTests } from '../../protocol/api/flow-tests.ts';
import type { Flow, FlowTestRecord } from '../../store/store.ts';
import { flowTestRunRoutes } from './runs.ts';

export const FlowParams = z.object({ flow_id: z.string() });
const TestParams = z.object({ flow_id: z.string(), test_id: z.string() });

/** A test is a short script: 32 KiB holds hundreds of steps. */
export const MAX_TEST_BYTES = 32 * 1024;
/** Tests one flow may keep. */
export const MAX_TESTS_PER_FLOW = 100;

const yamlContent = z.string({ error: 'must be the YAML test as a string' }).max(MAX_TEST_BYTES, `at most ${MAX_TEST_BYTES / 1024} KiB`);
const TestBody = z.object({ yaml_content: yamlContent });
const ImportBody = z.object({ yaml_content: z.string({ error: 'must be the YAML suite as a string' }).max(MAX_TESTS_PER_FLOW * MAX_TEST_BYTES / 8) });

export function testView(test: FlowTestRecord, diagnostics?: TestDiagnostic[]) {
  return {
    id: test.id,
    flow_id: test.flowId,
    name: test.name,
    yaml_content: test.yamlContent,
    created_at: test.createdAt,
    updated_at: test.updatedAt,
    ...(diagnostics ? { diagnostics } : {}),
  };
}

function refuse(diagnostics: TestDiagnostic[]): never {
  const errors = diagnostics.filter((d) => d.severity === 'error');
  const first = errors[0]!;
  throw new AppError(
    'invalid_flow_test',
    `The test has ${errors.length} ${errors.length === 1 ? 'error' : 'errors'}; the first, at line ${first.line}, column ${first.column}: ${first.message}`,
    diagnostics,
  );
}

export async function flowTestRoutes(server: FastifyInstance): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { store, flowJobs } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };

  const ownFlow = async (accountId: string, id: string): Promise<Flow> => {
    const flow = await store.flows.get(accountId, id);
    if (!flow) throw new AppError('flow_not_found', `No flow with the id "${id}".`);
    return flow;
  };
  const ownTest = async (accountId: string, flowId: string, id: string): Promise<FlowTestRecord> => {
    const test = await store.flowTests.get(accountId, flowId, id);
    if (!test) throw new AppError('flow_test_not_found', `This flow has no test with the id "${id}".`);
    return test;
  };
  /** Parsed against the flow's published text: the names it uses are checked there (warnings). */
  const parsed = async (accountId: string, flow: Flow, yaml: string) => {
    const result = await flowJobs.parseTests(accountId, yaml, flow.yamlContent);
    if (!result.tests) refuse(result.diagnostics);
    return result;
  };
  const assertRoom = async (accountId: string, flowId: string, adding: number) => {
    const count = await store.flowTests.count(accountId, flowId);
    if (count + adding > MAX_TESTS_PER_FLOW) {
      throw new AppError('invalid_request', `A flow keeps at most ${MAX_TESTS_PER_FLOW} tests; it has ${count}: delete some first.`);
    }
  };

  app.get('/v1/flows/:flow_id/tests', { config, schema: { params: FlowParams, response: { 200: z.array(FlowTestView) } } }, async (request) => {
    const accountId = accountOf(request.principal);
    await ownFlow(accountId, request.params.flow_id);
    return (await store.flowTests.list(accountId, request.params.flow_id)).map((test) => testView(test));
  });

  app.post('/v1/flows/:flow_id/tests', { config, schema: { params: FlowParams, body: TestBody, response: { 201: FlowTestView } } }, async (request, reply) => {
    const { body } = request;
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const result = await parsed(accountId, flow, body.yaml_content);
    if (result.shape === 'suite') throw new AppError('invalid_request', `This is a suite of ${result.tests!.length} tests: import it at /v1/flows/${flow.id}/tests/import.`);
    await assertRoom(accountId, flow.id, 1);
    const [test] = await store.flowTests.create(accountId, flow.id, [{ name: result.tests![0]!.name, yamlContent: body.yaml_content }]);
    return reply.status(201).send(testView(test!, result.diagnostics));
  });

  /** A suite file (or one test): each test becomes a stored test, in the file's order. */
  app.post('/v1/flows/:flow_id/tests/import', { config, schema: { params: FlowParams, body: ImportBody, response: { 201: ImportedTests } } }, async (request, reply) => {
    const { body } = request;
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const result = await parsed(accountId, flow, body.yaml_content);
    const texts = result.shape === 'suite' ? splitSuite(body.yaml_content) : [body.yaml_content];
    const tooLong = texts.findIndex((text) => text.length > MAX_TEST_BYTES);
    if (tooLong >= 0) throw new AppError('invalid_request', `Test ${tooLong + 1} of the suite is over ${MAX_TEST_BYTES / 1024} KiB.`);
    await assertRoom(accountId, flow.id, texts.length);
    const tests = await store.flowTests.create(
      accountId,
      flow.id,
      texts.map((text, i) => ({ name: result.tests![i]!.name, yamlContent: text })),
    );
    return reply.status(201).send({ tests: tests.map((test) => testView(test)), diagnostics: result.diagnostics });
  });

  /** Every test of the flow as one suite file, to keep beside the flow's YAML or run with the CLI. */
  const suiteFile = { 200: mediaBody('Every test of the flow as one suite file', ['application/yaml']) };
  app.get('/v1/flows/:flow_id/tests/export', { config, schema: { params: FlowParams, response: suiteFile } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const tests = await store.flowTests.list(accountId, flow.id);
    const filename = `${flow.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'flow'}.tests.yaml`;
    return reply
      .type('application/yaml; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .send(tests.length === 0 ? 'tests: []\n' : suiteText(tests.map((t) => ({ yaml: t.yamlContent }))));
  });

  app.get('/v1/flows/:flow_id/tests/:test_id', { config, schema: { params: TestParams, response: { 200: FlowTestView } } }, async (request) => {
    const accountId = accountOf(request.principal);
    await ownFlow(accountId, request.params.flow_id);
    return testView(await ownTest(accountId, request.params.flow_id, request.params.test_id));
  });

  app.put('/v1/flows/:flow_id/tests/:test_id', { config, schema: { params: TestParams, body: TestBody, response: { 200: FlowTestView } } }, async (request) => {
    const { body } = request;
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    await ownTest(accountId, flow.id, request.params.test_id);
    const result = await parsed(accountId, flow, body.yaml_content);
    if (result.shape === 'suite') throw new AppError('invalid_request', 'A stored test is one test, not a suite: import a suite at …/tests/import.');
    const test = await store.flowTests.update(accountId, flow.id, request.params.test_id, { name: result.tests![0]!.name, yamlContent: body.yaml_content });
    if (!test) throw new AppError('flow_test_not_found');
    return testView(test, result.diagnostics);
  });

  app.delete('/v1/flows/:flow_id/tests/:test_id', { config, schema: { params: TestParams, response: { 204: noBody('Deleted') } } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    await ownFlow(accountId, request.params.flow_id);
    if (!(await store.flowTests.remove(accountId, request.params.flow_id, request.params.test_id))) throw new AppError('flow_test_not_found');
    return reply.status(204).send();
  });

  await app.register(flowTestRunRoutes, { ownFlow });
}
