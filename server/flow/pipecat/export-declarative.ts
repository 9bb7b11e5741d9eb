// A Voxflow flow out as the declarative YAML FlowConfig of Pipecat Flows 1.x (`pipecat.flows`),
// valid against its JSON Schema, with a diagnostic at its path for each part that has no
// equivalent (docs/flows.md, "Pipecat Flows"). Pure: the studio exports with it too.
//
// - A state's tools are `functions: [{name, transition_to}]`; a FlowConfig names a function only,
//   so each tool's Voxflow definition goes into the `voxflow:` comment at the file's head
//   (companion.ts), which the import reads back.
// - `on_tool_result` is a Branch on the result's `next_state` (each listed state its own case),
//   with the tool's `on_tool_call` target as its `default`: the same choice Voxflow makes.
// - Global tools are `global_functions` with their target (Pipecat refuses a node function of a
//   global function's name, so a state's own route for a global tool is said, not written).
// - A `{name}` no tool or entry sets is a variable of the session's `context`: Pipecat's is a
//   `{{ name }}` filled when the flow is bound. Others are written as they are, and said.
import { Document } from 'yaml';
import { parseFlow } from '../parse.ts';
import type { Diagnostic, FlowDocument, FlowState, ToolDefinition } from '../types.ts';
import { writeCompanion } from './companion.ts';
import { plainText, preActionsOf } from './export.ts';
import { toYamlText } from './import.ts';
import { setOwn } from './read-functions.ts';
import type { ExportDiagnostic, PipecatDiagnosticCode } from './types.ts';

type Path = Array<string | number>;

export interface DeclarativeAction {
  type: string;
  text?: string;
}
export interface DeclarativeBranch {
  field: string;
  cases: Record<string, string>;
  default?: string;
}
export interface DeclarativeFunction {
  name: string;
  transition_to?: string | DeclarativeBranch;
}
export interface DeclarativeNode {
  role_message?: string;
  task_messages: Array<{ role: string; content: string }>;
  functions?: DeclarativeFunction[];
  pre_actions?: DeclarativeAction[];
  context_strategy?: 'append' | 'reset';
  respond_immediately?: boolean;
}
export interface DeclarativeFlowConfig {
  initial_node: string;
  nodes: Record<string, DeclarativeNode>;
  global_functions?: DeclarativeFunction[];
}

export interface DeclarativeExport {
  flowConfig: DeclarativeFlowConfig;
  /** Function name to its Voxflow definition, and a state's own where it differs: the `voxflow:` comment. */
  functions: Record<string, ToolDefinition>;
  nodeFunctions: Record<string, Record<string, ToolDefinition>>;
  diagnostics: ExportDiagnostic[];
}

export function exportDeclarativeFlow(flow: FlowDocument): DeclarativeExport {
  const diagnostics: ExportDiagnostic[] = [];
  const report = (code: PipecatDiagnosticCode, message: string, path: Path) => diagnostics.push({ severity: 'warning', code, message, path });

  // The variables something in the flow sets; any other `{name}` is the session context's.
  const setInFlow = new Set<string>();
  const collectTool = (tool: ToolDefinition) => {
    for (const name of Object.keys(tool.parameters ?? {})) setInFlow.add(name);
    for (const name of Object.keys(tool.http?.store ?? {})) setInFlow.add(name);
  };
  for (const tool of Object.values(flow.tools ?? {})) collectTool(tool);
  for (const state of Object.values(flow.states)) {
    for (const tool of Object.values(state.tools ?? {})) collectTool(tool);
    for (const name of Object.keys(state.on_enter?.set ?? {})) setInFlow.add(name);
    if (state.dtmf?.collect) setInFlow.add(state.dtmf.collect.into);
  }
  const text = (template: string, path: Path): string => {
    const kept: string[] = [];
    const bound: string[] = [];
    const { text: plain } = plainText(template, (name) => {
      if (setInFlow.has(name)) {
        kept.push(name);
        return `{${name}}`;
      }
      bound.push(name);
      return `{{ ${name} }}`;
    });
    if (kept.length > 0) {
      const listed = [...new Set(kept)].map((p) => `{${p}}`).join(', ');
      report('pipecat_placeholder_kept', `${listed}: set by a tool call, which Pipecat does not fill into texts, so the text keeps them as written (the model still sees the tool calls that set them)`, path);
    }
    if (bound.length > 0) {
      const listed = [...new Set(bound)].map((p) => `{{ ${p} }}`).join(', ');
      report('pipecat_placeholder_kept', `${listed}: a variable of the session's context in Voxflow is one Pipecat fills when the flow is bound (FlowConfig.bind(variables=…))`, path);
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

  const functions: Record<string, ToolDefinition> = {};
  const nodeFunctions: Record<string, Record<string, ToolDefinition>> = {};
  const saidTool = new Set<ToolDefinition>();
  const definitionFor = (tool: string, definition: ToolDefinition, toolPath: Path, state: string | null) => {
    if (!saidTool.has(definition)) {
      saidTool.add(definition);
      toolNotes(tool, definition, toolPath, report);
    }
    if (!Object.hasOwn(functions, tool)) setOwn(functions, tool, definition);
    else if (state !== null && JSON.stringify(functions[tool]) !== JSON.stringify(definition)) {
      if (!Object.hasOwn(nodeFunctions, state)) setOwn(nodeFunctions, state, {});
      setOwn(nodeFunctions[state]!, tool, definition);
      report('pipecat_no_equivalent', `state "${state}" defines "${tool}" its own way; a Pipecat function is one Python function for the whole flow, so the FlowConfig names one "${tool}" (the \`voxflow\` comment keeps this state's definition)`, toolPath);
    }
  };
  // Top-level definitions first, so a state's own is the one that differs.
  for (const [tool, definition] of Object.entries(flow.tools ?? {})) {
    const used = Object.hasOwn(settings.global_tools ?? {}, tool) || Object.values(flow.states).some((state) => state.agent.tools?.includes(tool) && !state.tools?.[tool]);
    if (used) definitionFor(tool, definition, ['tools', tool], null);
  }

  const globals = settings.global_tools ?? {};
  const globalFunctions: DeclarativeFunction[] = [];
  for (const [tool, global] of Object.entries(globals)) {
    if (!flow.tools?.[tool]) continue;
    globalFunctions.push({ name: tool, ...(global.target !== undefined ? { transition_to: global.target } : {}) });
  }

  const nodes: Record<string, DeclarativeNode> = {};
  for (const [stateName, state] of Object.entries(flow.states)) {
    const path: Path = ['states', stateName];
    // The flow's base prompt is the initial node's role, which Pipecat keeps for the nodes after it.
    const role = stateName === flow.initial_state && settings.base_system_prompt !== undefined ? text(settings.base_system_prompt, ['settings', 'base_system_prompt']) : undefined;
    const node: DeclarativeNode = {
      ...(role !== undefined ? { role_message: role } : {}),
      task_messages: [{ role: 'system', content: text(state.agent.prompt, [...path, 'agent', 'prompt']) }],
    };
    const list: DeclarativeFunction[] = [];
    for (const tool of state.agent.tools ?? []) {
      const own = state.tools?.[tool];
      const definition = own ?? flow.tools?.[tool];
      if (!definition || list.some((fn) => fn.name === tool)) continue;
      definitionFor(tool, definition, own ? [...path, 'tools', tool] : ['tools', tool], own ? stateName : null);
      const transition = transitionOf(state, tool);
      if (Object.hasOwn(globals, tool)) {
        if (JSON.stringify(transition) !== JSON.stringify(globals[tool]!.target)) {
          report('pipecat_no_equivalent', `this state gives the global tool "${tool}" a route of its own; Pipecat refuses a node function of a global function's name, so the global route applies here`, [...path, 'agent', 'tools']);
        }
        continue;
      }
      list.push({ name: tool, ...(transition !== undefined ? { transition_to: transition } : {}) });
    }
    if (list.length > 0) node.functions = list;

    const pre = preActionsOf(state, path, text, report);
    if (pre.length > 0) node.pre_actions = pre;
    if (state.context === 'reset') node.context_strategy = 'reset';
    if (state.respond === false) node.respond_immediately = false;
    if (state.ui !== undefined) report('pipecat_no_equivalent', 'the card (ui) has no FlowConfig equivalent: a Pipecat client draws its own', [...path, 'ui']);
    if (state.interruptible === false) report('pipecat_no_equivalent', '`interruptible: false` has no FlowConfig equivalent (Pipecat sets interruptions on the pipeline)', [...path, 'interruptible']);
    if (state.endpointing_ms !== undefined) report('pipecat_no_equivalent', '`endpointing_ms` has no FlowConfig equivalent (Pipecat sets it on its turn analyzer)', [...path, 'endpointing_ms']);
    if (state.turn !== undefined) report('pipecat_no_equivalent', '`turn` has no FlowConfig equivalent (Pipecat sets turn-taking on its turn analyzer and interruption strategies)', [...path, 'turn']);
    if (state.dtmf !== undefined) report('pipecat_no_equivalent', '`dtmf` (the caller\'s keypad) has no FlowConfig equivalent: its keys and collected number are left out', [...path, 'dtmf']);
    setOwn(nodes, stateName, node);
  }
  const flowConfig: DeclarativeFlowConfig = { initial_node: flow.initial_state, nodes, ...(globalFunctions.length > 0 ? { global_functions: globalFunctions } : {}) };
  return { flowConfig, functions, nodeFunctions, diagnostics };
}

function transitionOf(state: FlowState, tool: string): string | DeclarativeBranch | undefined {
  const target = state.transitions?.on_tool_call?.[tool];
  const results = state.transitions?.on_tool_result?.[tool];
  if (results === undefined || results.length === 0) return target;
  const cases: Record<string, string> = {};
  for (const result of results) setOwn(cases, result, result);
  return { field: 'next_state', cases, ...(target !== undefined ? { default: target } : {}) };
}

function toolNotes(name: string, tool: ToolDefinition, path: Path, report: (code: PipecatDiagnosticCode, message: string, path: Path) => void): void {
  const kept = 'kept in the file\'s `voxflow` comment for a return to Voxflow';
  if (tool.speech_cue !== undefined) report('pipecat_no_equivalent', `the speech cue of "${name}" has no FlowConfig equivalent (the Python function would say it): ${kept}`, [...path, 'speech_cue']);
  if (tool.http !== undefined) report('pipecat_no_equivalent', `the http action of "${name}" has no FlowConfig equivalent (the Python function "${name}" would make the call): ${kept}`, [...path, 'http']);
  if (tool.send_dtmf !== undefined) report('pipecat_no_equivalent', `the send_dtmf keys of "${name}" have no FlowConfig equivalent (the Python function would press them): ${kept}`, [...path, 'send_dtmf']);
}


export type ExportedDeclarativeFlow =
  | { ok: true; yaml: string; flowConfig: DeclarativeFlowConfig; functions: Record<string, ToolDefinition>; nodeFunctions: Record<string, Record<string, ToolDefinition>>; diagnostics: ExportDiagnostic[] }
  | { ok: false; diagnostics: Diagnostic[] };

/**
 * A flow's YAML text out as the declarative FlowConfig's YAML: the `voxflow:` comment with the
 * functions' definitions, then the FlowConfig. `head` is put first (the API's notes on what did
 * not carry over).
 */
export function exportDeclarativeFlowText(yamlText: string): ExportedDeclarativeFlow {
  const parsed = parseFlow(yamlText);
  if (!parsed.document) return { ok: false, diagnostics: parsed.diagnostics.filter((d) => d.severity === 'error') };
  const exported = exportDeclarativeFlow(parsed.document);
  const companion = writeCompanion(exported.functions, exported.nodeFunctions, toYamlText);
  const intro = '# A Pipecat Flows FlowConfig (pipecat.flows), exported from Voxflow.\n';
  const about = companion === '' ? '' : '# The functions\' Voxflow definitions, which Voxflow reads back on import (Pipecat takes them from the Python functions):\n';
  const body = toYamlText(new Document(exported.flowConfig, { aliasDuplicateObjects: false }));
  return { ok: true, yaml: `${intro}${about}${companion}${body}`, ...exported };
}
