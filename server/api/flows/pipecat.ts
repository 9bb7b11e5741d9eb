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
// - Pipecat Flows 1.x's YAML FlowConfig came later: import tells the formats apart by shape (and
//   says which it read, `format`); export gives it for `?format=declarative` (YAML) and
//   `declarative_json`. The default stays the format before 1.0, so a request that was valid
//   before means what it meant.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../errors.ts';
import type { Flow } from '../../store/store.ts';
import { accountOf } from '../../http/services.ts';
import { requireJsonBodyText } from '../../http/json-body.ts';
import { PipecatDeclarativeExport, PipecatExport, PipecatImport } from '../../protocol/api/flows.ts';

const FlowParams = z.object({ flow_id: z.string() });

const ExportQuery = z.object({
  format: z.enum(['json', 'yaml', 'declarative', 'declarative_json'], { error: 'must be json, yaml (Pipecat Flows before 1.0), declarative or declarative_json (the YAML FlowConfig of Pipecat Flows 1.x)' }).optional(),
});

export async function flowPipecatRoutes(server: FastifyInstance, { ownFlow }: { ownFlow(accountId: string, id: string): Promise<Flow> }): Promise<void> {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const { flowJobs } = app.services;
  const config = { auth: 'jwt_or_api_key' as const };

  const importDescription = 'The body is a Pipecat FlowConfig as JSON, or {"text": "..."} holding a FlowConfig file as it is (JSON or YAML).';
  app.post('/v1/flows/import/pipecat', { config: { ...config, jsonBodyAsText: true }, schema: { description: importDescription, response: { 200: PipecatImport } } }, async (request) => {
    const accountId = accountOf(request.principal);
    const body = requireJsonBodyText(request.body);
    const { yaml, format, diagnostics } = await flowJobs.importPipecat(accountId, body.bytes, body.maxDepth);
    if (yaml === null || format === null) {
      throw new AppError('invalid_pipecat_flow', `The file is not a Pipecat FlowConfig: ${diagnostics[0]?.message ?? 'it could not be read'}.`, diagnostics);
    }
    return { yaml_content: yaml, format, diagnostics };
  });

  const exported = {
    200: {
      description:
        'The published version as a Pipecat FlowConfig. Before 1.0 (format json, the default, or yaml): JSON with what did not carry over, or the YAML headed by those as comments. The YAML FlowConfig of Pipecat Flows 1.x (format declarative): YAML headed by those comments and the `voxflow` comment with the tools\' definitions; declarative_json: the same as JSON',
      content: { 'application/json': { schema: z.union([PipecatExport, PipecatDeclarativeExport]) }, 'application/yaml': { schema: z.string() } },
    },
  };
  const notesOf = (diagnostics: Array<{ code: string; path: Array<string | number>; message: string }>) => {
    const notes = diagnostics.map((d) => `# ${d.code} at ${d.path.join('.')}: ${d.message.replace(/\s+/g, ' ')}`);
    return notes.length > 0 ? `# Exported from Voxflow. Not carried over:\n${notes.join('\n')}\n` : '# Exported from Voxflow.\n';
  };
  app.get('/v1/flows/:flow_id/export/pipecat', { config, schema: { params: FlowParams, querystring: ExportQuery, response: exported } }, async (request, reply) => {
    const accountId = accountOf(request.principal);
    const flow = await ownFlow(accountId, request.params.flow_id);
    const { format = 'json' } = request.query;
    // A published version always validates; this is a stored flow from before a rule was added.
    const unpublishable = (diagnostics: unknown[]) => new AppError('invalid_flow', 'The published version of this flow has errors, so it cannot be exported; fix and publish it first.', diagnostics);
    if (format === 'declarative' || format === 'declarative_json') {
      const exported = await flowJobs.exportPipecatDeclarative(accountId, flow.yamlContent);
      if (!exported.ok) throw unpublishable(exported.diagnostics);
      if (format === 'declarative') return reply.type('application/yaml; charset=utf-8').send(`${notesOf(exported.diagnostics)}${exported.yaml}`);
      return { flow_config: exported.flowConfig, functions: exported.functions, node_functions: exported.nodeFunctions, diagnostics: exported.diagnostics };
    }
    const exported = await flowJobs.exportPipecat(accountId, flow.yamlContent);
    if (!exported.ok) throw unpublishable(exported.diagnostics);
    if (format === 'yaml') return reply.type('application/yaml; charset=utf-8').send(`${notesOf(exported.diagnostics)}${exported.yaml}`);
    return { flow_config: exported.flowConfig, diagnostics: exported.diagnostics };
  });
}
