// What the flow endpoints answer: flows, the studio's draft, the published versions, and the
// Pipecat Flows conversions. Diagnostics are the flow validator's, as server/flow reports them.
import { z } from 'zod';
import { DIAGNOSTIC_CODES, type DiagnosticCode } from '../../flow/diagnostic-codes.ts';
import { UnixSeconds } from './accounts.ts';

export const Severity = z.enum(['error', 'warning']);
const location = {
  message: z.string(),
  /** Where in the document, as keys from the root. */
  path: z.array(z.union([z.string(), z.number()])),
  /** 1-based line and column in the YAML text. */
  line: z.number(),
  column: z.number(),
};
export const Diagnostic = z
  .object({ severity: Severity, code: z.enum(Object.keys(DIAGNOSTIC_CODES) as [DiagnosticCode, ...DiagnosticCode[]]), ...location })
  .meta({ id: 'Diagnostic' });

export const FlowSummary = z.object({ id: z.string(), name: z.string(), created_at: UnixSeconds, updated_at: UnixSeconds });
/** Where the studio draws each state; kept beside the YAML by the server, never inside it. */
export const FlowLayout = z.object({ positions: z.record(z.string(), z.object({ x: z.number(), y: z.number() })) });
export const FlowRecord = FlowSummary.extend({
  /** The published version's text: what sessions started by a backend run. */
  yaml_content: z.string(),
  layout: FlowLayout.nullable(),
  published_version: z.number(),
  has_draft: z.boolean(),
  /** The document's warnings, in the answer to a write. */
  diagnostics: z.array(Diagnostic).optional(),
});

/** What the studio edits: the draft, or the published text while there is none. */
export const DraftRecord = z.object({
  flow_id: z.string(),
  yaml_content: z.string(),
  is_draft: z.boolean(),
  based_on_version: z.number(),
  published_version: z.number(),
  updated_at: UnixSeconds,
  /** Sent back as If-Match, so a save over someone else's newer draft is refused (412). */
  etag: z.string(),
  diagnostics: z.array(Diagnostic).optional(),
});

export const VersionAuthor = z.union([z.object({ kind: z.literal('studio') }), z.object({ kind: z.literal('api_key'), api_key_id: z.string() })]);
export const FlowVersionSummary = z.object({
  number: z.number(),
  /** The document's own `version` string. */
  document_version: z.string().nullable(),
  note: z.string(),
  created_at: UnixSeconds,
  created_by: VersionAuthor.nullable(),
  /** The version sessions run now. */
  published: z.boolean(),
});
export const FlowVersionRecord = FlowVersionSummary.extend({ yaml_content: z.string() });
export const PublishedVersion = z.object({ version: FlowVersionRecord, flow: FlowRecord });

/** A flow document as JSON (the visual editor's form); its content is the flow validator's to check. */
export const FlowJson = z.record(z.string(), z.unknown());

/** A Pipecat FlowConfig converted: the Voxflow YAML, the format it was read as, and what did not map. */
export const PipecatImport = z.object({
  yaml_content: z.string(),
  /** declarative: the YAML FlowConfig of Pipecat Flows 1.x; static: a FlowConfig of before 1.0; editor: the Pipecat Flows editor's JSON. */
  format: z.enum(['declarative', 'static', 'editor']),
  diagnostics: z.array(Diagnostic),
});
/** What the export could not carry over, said per part of the flow (no line: it is about the flow, not a text). */
export const PipecatExportDiagnostic = z.object({ severity: z.literal('warning'), code: z.string(), message: z.string(), path: z.array(z.union([z.string(), z.number()])) });
/** A Pipecat Flows FlowConfig: the node the flow starts at, and its nodes by name. */
export const PipecatFlowConfig = z.object({ initial_node: z.string(), nodes: z.record(z.string(), z.unknown()) });
export const PipecatExport = z.object({ flow_config: PipecatFlowConfig, diagnostics: z.array(PipecatExportDiagnostic) });
/**
 * The YAML FlowConfig of Pipecat Flows 1.x as JSON, with the tools' Voxflow definitions its YAML
 * carries in the `voxflow` comment: function name to tool, and a state's own where it differs.
 */
export const PipecatDeclarativeExport = z.object({
  flow_config: PipecatFlowConfig,
  functions: z.record(z.string(), z.unknown()),
  node_functions: z.record(z.string(), z.record(z.string(), z.unknown())),
  diagnostics: z.array(PipecatExportDiagnostic),
});

/** POST /v1/flows/{id}/tools/{tool}/test-request: the call a designer tries an http tool with. */
export const ToolTestRequestBody = z
  .object({
    /** The state whose tool it is (a state may define its own); absent: the first that offers it, or the flow's shared `tools:`. */
    state: z.string().max(200).optional(),
    /** The tool's arguments, as the model would give them. */
    arguments: z.record(z.string(), z.unknown()).default({}),
    /** The session's variables the request carries. */
    variables: z.record(z.string(), z.unknown()).default({}),
    /** The draft (what the studio edits), else the published version. */
    draft: z.boolean().default(true),
  })
  .strict();
export const ToolTestRequestResult = z.object({
  /** Where the request went, as the flow writes it; secrets stay out (headers are not echoed). */
  url: z.string(),
  method: z.string(),
  /** Whether the service answered 2xx with JSON within the tool's time limit. */
  ok: z.boolean(),
  /** The HTTP status, null when no answer came (refused, timed out, not JSON). */
  status: z.number().int().nullable(),
  /** The answer's JSON (secrets the request carried taken out of it), when it was ok. */
  body: z.unknown().optional(),
  /** Why it failed, as a session's tool call would be told. */
  error: z.string().optional(),
  duration_ms: z.number(),
});

const ViewPoint = z.object({ x: z.number(), y: z.number() });
/** A state's card on the studio's canvas (server/flow/graph/graph.ts, StateCard). */
export const FlowViewCard = z.object({
  name: z.string(),
  initial: z.boolean(),
  /** The card's prompt (`ui.prompt`), shortened. */
  excerpt: z.string(),
  tools: z.array(z.object({ name: z.string(), kind: z.enum(['move', 'stay', 'dangling', 'unlisted']), target: z.string().nullable() })),
  errors: z.number(),
  warnings: z.number(),
  says: z.boolean(),
  endsCall: z.boolean(),
  uninterruptible: z.boolean(),
  globalTools: z.array(z.string()),
  group: z.string().nullable(),
});
/** A transition drawn between two states (TransitionLink). */
export const FlowViewLink = z.object({
  id: z.string(),
  source: z.string(),
  target: z.string(),
  tool: z.string(),
  selfLoop: z.boolean(),
  index: z.number(),
  count: z.number(),
  branch: z.boolean().optional(),
});
/**
 * What the studio's canvas draws for the text it edits (the draft, else the published text) and
 * the flow's saved layout: the studio's own shapes, made by the studio's code in a flow worker.
 * `view` is null when the text is not readable YAML.
 */
export const FlowViewRecord = z.object({
  flow_id: z.string(),
  /** The draft's ETag (as GET /v1/flows/{id}/draft gives it): the text this view is of. */
  etag: z.string(),
  view: z
    .object({
      cards: z.array(FlowViewCard),
      links: z.array(FlowViewLink),
      initial: z.string().nullable(),
      positions: z.record(z.string(), ViewPoint),
      /** Edge id → where it runs on these positions: corners between the two cards, and where its label sits. */
      paths: z.record(z.string(), z.object({ corners: z.array(ViewPoint), label: z.object({ segment: z.number(), t: z.number() }) })),
    })
    .nullable(),
});
