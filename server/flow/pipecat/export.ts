// exportPipecatFlow: a Voxflow flow document out as a Pipecat Flows FlowConfig, with a diagnostic
// for each part that has no Pipecat equivalent. Pure: the studio exports with it too.
//
// The functions are written in the OpenAI dict form with `transition_to`: of the forms a static
// FlowConfig took, it is the one that is plain data (FlowsFunctionSchema and direct functions
// are Python), so the JSON loads with `json.load` into `FlowManager(flow_config=...)` of
// pipecat-flows up to 0.0.24. Newer pipecat-flows builds nodes in code; the FlowConfig is then
// the map of what to build.
import { Document } from 'yaml';
import { parseFlow } from '../parse.ts';
import type { Diagnostic, FlowDocument, FlowState, ToolDefinition } from '../types.ts';
import { toYamlText } from './import.ts';
import { setOwn } from './read-functions.ts';
import type { ExportDiagnostic, PipecatAction, PipecatDiagnosticCode, PipecatExport, PipecatFlowConfig, PipecatFunction, PipecatNode, PipecatProperty } from './types.ts';

type Path = Array<string | number>;

const PLACEHOLDER_AT = /\{([A-Za-z_][A-Za-z0-9_]*)\}/y;

/**
 * A Voxflow template as Pipecat's plain text: `{{` and `}}` are the braces they stand for;
 * `{name}` placeholders are written as `placeholder` says (as written unless told), and are returned.
 */
export function plainText(template: string, placeholder: (name: string) => string = (name) => `{${name}}`): { text: string; placeholders: string[] } {
  let text = '';
  const placeholders: string[] = [];
  for (let index = 0; index < template.length; ) {
    const char = template[index]!;
    const next = template[index + 1];
    if ((char === '{' && next === '{') || (char === '}' && next === '}')) {
      text += char;
      index += 2;
      continue;
    }
    if (char === '{') {
      PLACEHOLDER_AT.lastIndex = index;
      const match = PLACEHOLDER_AT.exec(template);
      if (match) {
        placeholders.push(match[1]!);
        text += placeholder(match[1]!);
        index += match[0].length;
        continue;
      }
    }
    text += char;
    index++;
  }
  return { text, placeholders };
}

export function exportPipecatFlow(flow: FlowDocument): PipecatExport {
  const diagnostics: ExportDiagnostic[] = [];
  const report = (code: PipecatDiagnosticCode, message: string, path: Path) => diagnostics.push({ severity: 'warning', code, message, path });
  const text = (template: string, path: Path): string => {
    const { text: plain, placeholders } = plainText(template);
    if (placeholders.length > 0) {
      const listed = [...new Set(placeholders)].map((p) => `{${p}}`).join(', ');
      report('pipecat_placeholder_kept', `${listed}: Pipecat does not fill placeholders, so the text keeps them as written (the model still sees the tool calls that set them)`, path);
    }
    return plain;
  };

  const settings = flow.settings ?? {};
  for (const key of Object.keys(settings)) {
    if (key === 'voicemail') {
      report('pipecat_no_equivalent', 'settings.voicemail has no FlowConfig equivalent (answering-machine detection is the telephony transport\'s, in code): it is left out', ['settings', key]);
    } else if (key !== 'base_system_prompt' && key !== 'global_tools') {
      report('pipecat_no_equivalent', `settings.${key} has no FlowConfig equivalent (Pipecat sets it on its services, in code)`, ['settings', key]);
    }
  }
  const globals = Object.entries(settings.global_tools ?? {});
  for (const [name] of globals) {
    report('pipecat_global_tool_copied', `the global tool "${name}" is written into every node's functions (a FlowConfig has no global functions)`, ['settings', 'global_tools', name]);
  }

  const nodes: Record<string, PipecatNode> = {};
  for (const [stateName, state] of Object.entries(flow.states)) {
    const path: Path = ['states', stateName];
    // The flow's base prompt is the initial node's role, which Pipecat keeps for the nodes after it.
    const role = stateName === flow.initial_state && settings.base_system_prompt !== undefined ? text(settings.base_system_prompt, ['settings', 'base_system_prompt']) : undefined;
    const node: PipecatNode = {
      ...(role !== undefined ? { role_messages: [{ role: 'system', content: role }] } : {}),
      task_messages: [{ role: 'system', content: text(state.agent.prompt, [...path, 'agent', 'prompt']) }],
    };

    const functions: PipecatFunction[] = [];
    const listed = state.agent.tools ?? [];
    for (const tool of listed) {
      const definition = state.tools?.[tool] ?? flow.tools?.[tool];
      if (!definition) continue;
      const toolPath = state.tools?.[tool] ? [...path, 'tools', tool] : ['tools', tool];
      functions.push(functionOf(tool, definition, state.transitions?.on_tool_call?.[tool], toolPath, report));
      if (state.transitions?.on_tool_result?.[tool]) {
        report('pipecat_no_equivalent', `the states "${tool}"'s result may choose have no FlowConfig equivalent (a handler would choose them in code): the tool keeps the state`, [...path, 'transitions', 'on_tool_result', tool]);
      }
    }
    for (const [tool, global] of globals) {
      if (listed.includes(tool) || !flow.tools?.[tool]) continue;
      functions.push(functionOf(tool, flow.tools[tool], global.target, ['tools', tool], () => {}));
    }
    if (functions.length > 0) node.functions = functions;

    const pre = preActionsOf(state, path, text, report);
    if (pre.length > 0) node.pre_actions = pre;
    if (state.context === 'reset') node.context_strategy = { strategy: 'RESET' };
    if (state.respond === false) node.respond_immediately = false;
    if (state.ui !== undefined) report('pipecat_no_equivalent', 'the card (ui) has no FlowConfig equivalent: a Pipecat client draws its own', [...path, 'ui']);
    if (state.interruptible === false) report('pipecat_no_equivalent', '`interruptible: false` has no FlowConfig equivalent (Pipecat sets interruptions on the pipeline)', [...path, 'interruptible']);
    if (state.endpointing_ms !== undefined) report('pipecat_no_equivalent', '`endpointing_ms` has no FlowConfig equivalent (Pipecat sets it on its turn analyzer)', [...path, 'endpointing_ms']);
    if (state.turn !== undefined) report('pipecat_no_equivalent', '`turn` has no FlowConfig equivalent (Pipecat sets turn-taking on its turn analyzer and interruption strategies)', [...path, 'turn']);
    // The caller's keypad and a transfer are the telephony transport's in Pipecat, in code.
    if (state.dtmf !== undefined) report('pipecat_no_equivalent', '`dtmf` (the caller\'s keypad) has no FlowConfig equivalent: its keys and collected number are left out', [...path, 'dtmf']);
    setOwn(nodes, stateName, node);
  }
  return { flowConfig: { initial_node: flow.initial_state, nodes }, diagnostics };
}

function functionOf(name: string, tool: ToolDefinition, target: string | undefined, path: Path, report: (code: PipecatDiagnosticCode, message: string, path: Path) => void): PipecatFunction {
  const properties: Record<string, PipecatProperty> = {};
  const required: string[] = [];
  for (const [parameter, declared] of Object.entries(tool.parameters ?? {})) {
    const property: PipecatProperty = { type: declared.type };
    if (declared.description !== undefined) property.description = declared.description;
    if (declared.enum !== undefined) property.enum = declared.enum;
    setOwn(properties, parameter, property);
    if (declared.required) required.push(parameter);
  }
  const fn: PipecatFunction['function'] = { name, description: tool.description, parameters: { type: 'object', properties, ...(required.length > 0 ? { required } : {}) } };
  if (target !== undefined) fn.transition_to = target;
  if (tool.speech_cue !== undefined) report('pipecat_no_equivalent', `the speech cue of "${name}" has no FlowConfig equivalent (a handler would say it): it is left out`, [...path, 'speech_cue']);
  if (tool.http !== undefined) report('pipecat_no_equivalent', `the http action of "${name}" has no FlowConfig equivalent (a Pipecat handler would make the call, in code): it is left out`, [...path, 'http']);
  if (tool.send_dtmf !== undefined) report('pipecat_no_equivalent', `the send_dtmf keys of "${name}" have no FlowConfig equivalent (a handler would press them, in code): they are left out`, [...path, 'send_dtmf']);
  return { type: 'function', function: fn };
}

/** A state's `on_enter` as Pipecat pre-actions, the same in both FlowConfig formats; what has no equivalent is reported. */
export function preActionsOf(state: FlowState, path: Path, text: (template: string, path: Path) => string, report: (code: PipecatDiagnosticCode, message: string, path: Path) => void): PipecatAction[] {
  const pre: PipecatAction[] = [];
  const onEnter = state.on_enter;
  if (onEnter?.set !== undefined) report('pipecat_no_equivalent', '`on_enter.set` has no FlowConfig equivalent (a Pipecat action handler would set state, in code): it is left out', [...path, 'on_enter', 'set']);
  if (onEnter?.say !== undefined) pre.push({ type: 'tts_say', text: text(onEnter.say, [...path, 'on_enter', 'say']) });
  // Voxflow ends on entering, after what on_enter says and without the model: Pipecat's
  // pre-action end_conversation does the same (it ends before the model would run).
  if (onEnter?.end_session === true) pre.push({ type: 'end_conversation' });
  if (onEnter?.transfer !== undefined) report('pipecat_no_equivalent', '`on_enter.transfer` has no FlowConfig equivalent (a handler would transfer the call through the carrier, in code): it is left out', [...path, 'on_enter', 'transfer']);
  return pre;
}

export type ExportedPipecatFlow =
  | { ok: true; json: string; yaml: string; flowConfig: PipecatFlowConfig; diagnostics: ExportDiagnostic[] }
  /** The flow has errors (a draft may): they are the validator's, with their lines. */
  | { ok: false; diagnostics: Diagnostic[] };

/** A flow's YAML text out as a FlowConfig in JSON and in YAML, or its errors. */
export function exportPipecatFlowText(yamlText: string): ExportedPipecatFlow {
  const parsed = parseFlow(yamlText);
  if (!parsed.document) return { ok: false, diagnostics: parsed.diagnostics.filter((d) => d.severity === 'error') };
  const { flowConfig, diagnostics } = exportPipecatFlow(parsed.document);
  return { ok: true, json: `${JSON.stringify(flowConfig, null, 2)}\n`, yaml: toYamlText(new Document(flowConfig, { aliasDuplicateObjects: false })), flowConfig, diagnostics };
}
