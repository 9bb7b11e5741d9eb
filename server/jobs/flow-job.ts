// What a flow job computes, apart from where it runs: the worker (flow-worker.ts) calls
// runFlowJob on each message. Jobs and results are plain data, so they cross between threads by
// structured clone and the answers stay exactly what the flow model returns.
import { parseFlow } from '../flow/parse.ts';
import { flowView } from '../flow/graph/view.ts';
import { exportDeclarativeFlowText, exportPipecatFlowText, importPipecatFlow, type ExportedDeclarativeFlow, type ExportedPipecatFlow, type PipecatImport } from '../flow/pipecat/index.ts';
import { parseFlowTests, type FlowTest, type TestDiagnostic } from '../flow/tests-format.ts';
import type { Diagnostic, FlowDocument } from '../flow/types.ts';
import { applyJsonToYaml, yamlToJson } from '../flow/yaml-edit/index.ts';
import { CreateFlowBody } from './flow-bodies.ts';
import { bodyText, objectBodyRefusal, parseJsonText, readJsonBody, type JsonTextRefusal } from './json-text.ts';

export type FlowJob =
  /** Every diagnostic of a YAML text (uploads and edits). */
  | { kind: 'validate'; yaml: string }
  /** The document a session runs, or null when the text has errors. */
  | { kind: 'parse'; yaml: string }
  /** The document as plain data (the visual editor's JSON view). */
  | { kind: 'to_json'; yaml: string }
  /** JSON applied onto stored YAML, and the result's diagnostics. */
  | { kind: 'apply_json'; yaml: string; json: unknown }
  /** The same with the JSON still the request body's UTF-8 bytes: decoded and parsed here, not on the audio thread. */
  | { kind: 'apply_json_text'; yaml: string; body: Uint8Array; maxDepth: number }
  /**
   * A new flow's request body (POST /v1/flows) as its UTF-8 bytes: read and checked here as the
   * main thread reads any body, then its YAML validated, unless it is larger than `validateUpTo`
   * bytes (what the account's storage quota leaves; -1 when it may keep no more flows): a
   * request the quota refuses costs no validation.
   */
  | { kind: 'create_flow'; body: Uint8Array; maxDepth: number; validateUpTo: number }
  /** The document's JSON form as text, ready to send: nothing to copy back or serialise on the audio thread. */
  | { kind: 'to_json_text'; yaml: string }
  /** A flow test or suite, checked against the flow it is for (whose document comes back to run them). */
  | { kind: 'parse_tests'; yaml: string; flowYaml: string }
  /**
   * A Pipecat FlowConfig as a Voxflow flow (flow/pipecat). The request body's JSON text: the
   * FlowConfig itself, or `{"text": "..."}` holding its JSON or YAML text.
   */
  | { kind: 'pipecat_import'; body: Uint8Array; maxDepth: number }
  /** A flow's YAML out as a Pipecat FlowConfig of before 1.0. */
  | { kind: 'pipecat_export'; yaml: string }
  /** A flow's YAML out as the YAML FlowConfig of Pipecat Flows 1.x. */
  | { kind: 'pipecat_export_declarative'; yaml: string }
  /**
   * What the studio's canvas draws for a text and the layout saved with the flow (its stored JSON
   * text, `{"positions": {...}}`; flow/graph/view.ts), as the JSON the view endpoint answers
   * with, `head` and `tail` around it.
   */
  | { kind: 'flow_view'; yaml: string; layout: string | null; head: string; tail: string };

export interface FlowJobResults {
  /** documentVersion: the document's own `version` string, when it validates (a stored version keeps it). */
  validate: { diagnostics: Diagnostic[]; documentVersion: string | null };
  parse: { document: FlowDocument | null };
  to_json: { json: unknown };
  /** UTF-8 bytes, in a buffer of their own: transferred back, not copied (flow-worker.ts). */
  to_json_text: { jsonText: Uint8Array };
  /** `refused`: the body is not a JSON object (json-text.ts), with the code to answer. */
  /**
   * With `yamlJson`: the resulting YAML as a JSON string literal, the UTF-8 bytes an answer quotes
   * it with. `yaml` is null when the edit left the job's text as it was (a client saving what it
   * read): the pool's caller has that text already, and a copy of it would only be more work for
   * the thread that paces audio (FlowJobs.applyJsonText puts it back).
   */
  apply_json_text: (Omit<FlowJobResults['apply_json'], 'yaml'> & { yaml: string | null; yamlJson: Uint8Array }) | { refused: JsonTextRefusal & { details?: unknown[] } };
  apply_json: { yaml: string; diagnostics: Diagnostic[]; documentVersion: string | null };
  /**
   * The body's fields as the route's schema gives them (the name trimmed), its YAML's UTF-8 size,
   * and the YAML's validation (null when it was past `validateUpTo`); or why the body is refused.
   */
  create_flow:
    | { body: CreateFlowBody; yamlBytes: number; yamlJson: Uint8Array; validated: FlowJobResults['validate'] | null }
    | { refused: JsonTextRefusal };
  parse_tests: { tests: FlowTest[] | null; shape: 'suite' | 'test'; diagnostics: TestDiagnostic[]; flow: FlowDocument | null };
  pipecat_import: PipecatImport | { refused: JsonTextRefusal };
  pipecat_export: ExportedPipecatFlow;
  pipecat_export_declarative: ExportedDeclarativeFlow;
  /** UTF-8 JSON: `head`, the view (or null, when the text is not readable YAML), `tail`; in a buffer of its own. */
  flow_view: { viewJson: Uint8Array; readable: boolean };
}

export type FlowJobResult = FlowJobResults[FlowJob['kind']];

const encoder = new TextEncoder();
/**
 * A text as UTF-8 in a buffer of its own, so that the worker can transfer it back (Buffer.from
 * would share Node's pool for short texts): an answer's bytes are made here, and the thread that
 * paces audio only sends them, without encoding or copying hundreds of KiB.
 */
const utf8 = (text: string): Uint8Array => encoder.encode(text);

export function runFlowJob(job: FlowJob): FlowJobResult {
  switch (job.kind) {
    case 'validate': {
      const { diagnostics, document } = parseFlow(job.yaml);
      return { diagnostics, documentVersion: document?.version ?? null };
    }
    case 'parse':
      return { document: parseFlow(job.yaml).document };
    case 'to_json':
      return { json: yamlToJson(job.yaml) };
    case 'to_json_text':
      return { jsonText: utf8(JSON.stringify(yamlToJson(job.yaml))) };
    case 'apply_json_text': {
      const parsed = parseJsonText(bodyText(job.body), job.maxDepth);
      if (!parsed.ok) return { refused: parsed.refusal };
      const refusal = objectBodyRefusal(parsed.value);
      if (refusal) return { refused: refusal };
      const applied = runFlowJob({ kind: 'apply_json', yaml: job.yaml, json: parsed.value }) as FlowJobResults['apply_json'];
      return { ...applied, yaml: applied.yaml === job.yaml ? null : applied.yaml, yamlJson: utf8(JSON.stringify(applied.yaml)) };
    }
    case 'parse_tests': {
      const flow = parseFlow(job.flowYaml).document;
      return { ...parseFlowTests(job.yaml, flow), flow };
    }
    case 'create_flow': {
      const read = readJsonBody(job.body, job.maxDepth);
      if (!read.ok) return { refused: read.refusal };
      // As parseInput (http/validation.ts) words the route schema's refusals.
      if (read.value === null) return { refused: { code: 'invalid_request', message: 'The request needs a JSON object body.' } };
      const checked = CreateFlowBody.safeParse(read.value);
      if (!checked.success) {
        const details = checked.error.issues.map((issue) => ({ field: issue.path.length > 0 ? issue.path.join('.') : 'body', message: issue.message }));
        return { refused: { code: 'invalid_request', message: `The body is not valid: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}.`, details } };
      }
      const body = checked.data;
      const yamlBytes = Buffer.byteLength(body.yaml_content, 'utf8');
      return { body, yamlBytes, yamlJson: utf8(JSON.stringify(body.yaml_content)), validated: job.validateUpTo >= 0 && yamlBytes <= job.validateUpTo ? (runFlowJob({ kind: 'validate', yaml: body.yaml_content }) as FlowJobResults['validate']) : null };
    }
    case 'pipecat_import': {
      const jsonText = bodyText(job.body);
      const parsed = parseJsonText(jsonText, job.maxDepth);
      if (!parsed.ok) return { refused: parsed.refusal };
      const value = parsed.value as Record<string, unknown> | null;
      // `{"text": ...}` carries a file as it was (YAML, or JSON with its own lines); any other
      // body is the FlowConfig itself, read from the body's text so lines are the body's.
      const wrapped = typeof value === 'object' && value !== null && typeof value.text === 'string' && Object.keys(value).length === 1;
      return importPipecatFlow(wrapped ? (value.text as string) : jsonText);
    }
    case 'pipecat_export':
      return exportPipecatFlowText(job.yaml);
    case 'pipecat_export_declarative':
      return exportDeclarativeFlowText(job.yaml);
    case 'flow_view': {
      const view = flowView(job.yaml, savedPositions(job.layout));
      return { viewJson: utf8(`${job.head}${JSON.stringify(view)}${job.tail}`), readable: view !== null };
    }
    case 'apply_json': {
      const yaml = applyJsonToYaml(job.yaml, job.json);
      const { diagnostics, document } = parseFlow(yaml);
      return { yaml, diagnostics, documentVersion: document?.version ?? null };
    }
  }
}

/** The positions a flow's stored layout holds; none when it has no layout (or one not readable). */
function savedPositions(layout: string | null): Record<string, { x: number; y: number }> {
  if (layout === null) return {};
  try {
    const positions = (JSON.parse(layout) as { positions?: unknown } | null)?.positions;
    return typeof positions === 'object' && positions !== null ? (positions as Record<string, { x: number; y: number }>) : {};
  } catch {
    return {};
  }
}
