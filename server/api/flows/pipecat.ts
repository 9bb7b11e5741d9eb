// Pipecat Flows interop over the API (docs/flows.md). Both directions run in the flow-job pool: a
// FlowConfig of hundreds of KiB is parsed and converted there, never on the thread that paces
// audio.
//
// Decisions where the issue left them open:
// - Import converts and answers; it does not create the flow. The answer is the Voxflow YAML and
//   what did not map, which a person wants to read before it becomes a flow (the studio shows
//   it, then creates the flow with the name the person chose); a script sends `yaml_content`
//   on to POST /v1/flows. A FlowConfig that converts at all converts to a valid flow, so the
//   only refusal is a file that is not a FlowConfig (422 invalid_pipecat_flow, with the reason).
// - The body is JSON (as every body of this API): the FlowConfig itself, or `{"text": "..."}`
//   with a file's text as it is, JSON or YAML. Diagnostics point at lines of that text.
// - Export is of the published version, what sessions run: `{flow_config, diagnostics}`, or with
//   `?format=yaml` the FlowConfig as YAML, headed by what did not carry over as comments.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { Flow } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { requireJsonBodyText } from '../../http/json-body.ts';
import { PipecatExport, PipecatImport } from '../../protocol/api/flows.ts';

const FlowParams = z.object({ flow_id: z.string() });

const ExportQuery = z.object({ format: z.enum(['json', 'yaml'], { error: 'must be json or yaml' }).optional() });

export async function flowPipecatRoutes(server: FastifyInstance, { ownFlow }: { ownFlow(accountId: string, id: string): Promise<Flow> }): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { flowJobs } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };

  const importDescription = 'The body is a Pipecat FlowConfig as JSON, or {"text": "..."} holding a FlowConfig file as it is (JSON or YAML).';
  app.post('/v1/flows/import/pipecat', { config: { ...config, jsonBodyAsText: true }, schema: { description: importDescription, response: { 200: PipecatImport } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const body = requireJsonBodyText(request.body);
    const { yaml, diagnostics } = await flowJobs.importPipecat(accountId, body.text, body.maxDepth);
    if (yaml === null) {
      throw new AppError('invalid_pipecat_flow', `The file is not a Pipecat FlowConfig: ${diagnostics[0]?.message ?? 'it could not be read'}.`, diagnostics);
    }
    return { yaml_content: yaml, diagnostics };
  });

  const exported = {
    200: {
      description: 'The published version as a Pipecat FlowConfig: JSON with what did not carry over, or with ?format=yaml the YAML headed by those as comments',
      content: { 'application/json': { schema: PipecatExport }, 'application/yaml': { schema: z.string() } },
    },
  };
  app.get('/v1/flows/:flow_id/export/pipecat', { config, schema: { params: FlowParams, querystring: ExportQuery, response: exported } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const { format = 'json' } = request.query;
    const exported = await flowJobs.exportPipecat(accountId, flow.yamlContent);
    // A published version always validates; this is a stored flow from before a rule was added.
    if (!exported.ok) throw new AppError('invalid_flow', 'The published version of this flow has errors, so it cannot be exported; fix and publish it first.', exported.diagnostics);
    if (format === 'yaml') {
      const notes = exported.diagnostics.map((d) => `# ${d.code} at ${d.path.join('.')}: ${d.message.replace(/\s+/g, ' ')}`);
      const head = notes.length > 0 ? `# Exported from Voxflow. Not carried over:\n${notes.join('\n')}\n` : '# Exported from Voxflow.\n';
      return reply.type('application/yaml; charset=utf-8').send(`${head}${exported.yaml}`);
    }
    return { flow_config: exported.flowConfig, diagnostics: exported.diagnostics };
  });
}
