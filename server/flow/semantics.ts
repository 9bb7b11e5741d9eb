// Checks that need the whole flow at once: states and tools that refer to each other, what can
// be reached, and placeholders that nothing could fill. It reads the document defensively, so it
// still reports what it can on a document that also has structural errors.
//
// The extended keys (docs/flows.md) that refer to states and tools (top-level and global tools,
// `on_tool_result`, `on_enter.end_session`) take part here; the checks of one tool or one state on
// its own (http actions, enums, on-entry speech) are in semantics-local.ts; the keys of a phone
// call (keypad, transfer, send_dtmf) in semantics-phone.ts, whose moves count here as transitions.
import { findPlaceholders } from './template.ts';
import type { DiagnosticCode } from './diagnostic-codes.ts';
import { checkLocalRules, settableByDocument } from './semantics-local.ts';
import { checkPhoneRules } from './semantics-phone.ts';
import { checkOutcomeRules } from './semantics-outcome.ts';

/** Its severity is its code's, from DIAGNOSTIC_CODES. */
export interface SemanticProblem {
  code: DiagnosticCode;
  message: string;
  path: Array<string | number>;
  atKey: boolean;
  /** For placeholder warnings: the text to find inside the scalar, and which occurrence. */
  needle?: { text: string; occurrence: number };
}

type Obj = Record<string, unknown>;

function asObject(value: unknown): Obj | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

function asStringList(value: unknown): Array<{ name: string; index: number }> {
  if (!Array.isArray(value)) return [];
  return value.flatMap((name, index) => (typeof name === 'string' ? [{ name, index }] : []));
}

/** Loose semantic-version check: 1, 1.2, 1.2.3, with an optional -pre or +build suffix. */
const SEMVER_LIKE = /^v?\d+(\.\d+){0,2}([-+][0-9A-Za-z.-]+)*$/;

export function checkSemantics(root: unknown): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  const doc = asObject(root);
  if (!doc) return out;

  if (typeof doc.version === 'string' && !SEMVER_LIKE.test(doc.version)) {
    out.push({
      code: 'version_not_semver',
      message: `version "${doc.version}" is not a semantic version like 1.0.0`,
      path: ['version'],
      atKey: false,
    });
  }

  const states = asObject(doc.states);
  if (!states) return out;
  const stateNames = Object.keys(states);
  if (stateNames.length === 0) {
    out.push({
      code: 'no_states',
      message: 'states is empty: a flow needs at least one state',
      path: ['states'],
      atKey: true,
    });
    return out;
  }

  const initial = doc.initial_state;
  const initialIsState = typeof initial === 'string' && Object.hasOwn(states, initial);
  if (typeof initial === 'string' && !initialIsState) {
    out.push({
      code: 'unknown_initial_state',
      message: `initial_state "${initial}" is not one of the states (${stateNames.join(', ')})`,
      path: ['initial_state'],
      atKey: false,
    });
  }

  // Every parameter name anywhere can become a variable; used for the placeholder check.
  const settableVariables = settableByDocument(doc);
  const edges = new Map<string, Set<string>>();
  const sharedTools = asObject(doc.tools) ?? {};
  const globalTargets = checkGlobalTools(doc, states, sharedTools, out);
  const phoneTargets = checkPhoneRules(doc, states, out);
  // A shared tool is "listed" when it is global or some state lists it.
  const sharedUsed = new Set<string>(Object.keys(asObject(asObject(doc.settings)?.global_tools) ?? {}));

  for (const stateName of stateNames) {
    const state = asObject(states[stateName]);
    // A key, a collected number or a failed transfer leads on as a tool's move does.
    const targets = new Set<string>(phoneTargets.get(stateName));
    edges.set(stateName, targets);
    if (!state) continue;
    const statePath = ['states', stateName];
    const agent = asObject(state.agent);
    const tools = asObject(state.tools) ?? {};
    const listed = asStringList(agent?.tools);
    const listedNames = new Set<string>();

    for (const { name, index } of listed) {
      if (listedNames.has(name)) {
        out.push({
          code: 'duplicate_tool_listing',
          message: `state "${stateName}" lists the tool "${name}" more than once`,
          path: [...statePath, 'agent', 'tools', index],
          atKey: false,
        });
        continue;
      }
      listedNames.add(name);
      if (Object.hasOwn(tools, name)) continue;
      if (Object.hasOwn(sharedTools, name)) {
        sharedUsed.add(name);
        continue;
      }
      out.push({
        code: 'undefined_tool',
        message: `state "${stateName}" lists the tool "${name}" but defines no such tool under states.${stateName}.tools (or the flow's top-level tools)`,
        path: [...statePath, 'agent', 'tools', index],
        atKey: false,
      });
    }

    for (const [toolName, definition] of Object.entries(tools)) {
      if (!listedNames.has(toolName)) {
        out.push({
          code: 'unlisted_tool',
          message: `state "${stateName}" defines the tool "${toolName}" but does not list it in agent.tools, so the model can never call it`,
          path: [...statePath, 'tools', toolName],
          atKey: true,
        });
      }
      if (globalTargets.has(toolName)) {
        out.push({
          code: 'global_tool_shadowed',
          message: `state "${stateName}" defines its own "${toolName}", which hides the global tool of that name in this state`,
          path: [...statePath, 'tools', toolName],
          atKey: true,
        });
      }
    }
    // A global tool with a target leads there from every state that does not hide it.
    for (const [toolName, target] of globalTargets) {
      if (target !== null && !Object.hasOwn(tools, toolName)) targets.add(target);
    }

    const onToolCall = asObject(asObject(state.transitions)?.on_tool_call) ?? {};
    for (const [toolName, target] of Object.entries(onToolCall)) {
      const transitionPath = [...statePath, 'transitions', 'on_tool_call', toolName];
      if (!listedNames.has(toolName)) {
        out.push({
          code: 'transition_from_unlisted_tool',
          message: `state "${stateName}" has a transition for the tool "${toolName}", which is not in its agent.tools`,
          path: transitionPath,
          atKey: true,
        });
      }
      if (typeof target !== 'string') continue;
      if (!Object.hasOwn(states, target)) {
        out.push({
          code: 'unknown_target_state',
          message: `the tool "${toolName}" in state "${stateName}" leads to "${target}", which is not a state`,
          path: transitionPath,
          atKey: false,
        });
      } else if (listedNames.has(toolName)) {
        targets.add(target);
      }
    }

    const onToolResult = asObject(asObject(state.transitions)?.on_tool_result) ?? {};
    for (const [toolName, choices] of Object.entries(onToolResult)) {
      const transitionPath = [...statePath, 'transitions', 'on_tool_result', toolName];
      if (!listedNames.has(toolName)) {
        out.push({
          code: 'transition_from_unlisted_tool',
          message: `state "${stateName}" has result transitions for the tool "${toolName}", which is not in its agent.tools`,
          path: transitionPath,
          atKey: true,
        });
      } else {
        const definition = asObject(Object.hasOwn(tools, toolName) ? tools[toolName] : Object.hasOwn(sharedTools, toolName) ? sharedTools[toolName] : null);
        if (definition && !asObject(definition.http)) {
          out.push({
            code: 'result_transition_without_http',
            message: `the tool "${toolName}" has no http action, so no result can choose among the states of on_tool_result`,
            path: transitionPath,
            atKey: true,
          });
        }
      }
      for (const { name: target, index } of asStringList(choices)) {
        if (!Object.hasOwn(states, target)) {
          out.push({
            code: 'unknown_target_state',
            message: `a result of the tool "${toolName}" in state "${stateName}" may lead to "${target}", which is not a state`,
            path: [...transitionPath, index],
            atKey: false,
          });
        } else if (listedNames.has(toolName)) {
          targets.add(target);
        }
      }
    }
  }

  for (const toolName of Object.keys(sharedTools)) {
    if (sharedUsed.has(toolName)) continue;
    out.push({
      code: 'unlisted_tool',
      message: `the flow defines the tool "${toolName}" but no state lists it and settings.global_tools does not name it, so the model can never call it`,
      path: ['tools', toolName],
      atKey: true,
    });
  }

  if (initialIsState) {
    const reached = new Set<string>([initial]);
    // Read by index: shifting a long array moves its whole rest each time.
    const queue = [initial];
    for (let head = 0; head < queue.length; head++) {
      for (const next of edges.get(queue[head]!) ?? []) {
        if (!reached.has(next)) {
          reached.add(next);
          queue.push(next);
        }
      }
    }
    for (const stateName of stateNames) {
      if (!reached.has(stateName)) {
        out.push({
          code: 'unreachable_state',
          message: `state "${stateName}" cannot be reached from the initial state "${initial}"`,
          path: ['states', stateName],
          atKey: true,
        });
      }
    }
  }

  for (const stateName of stateNames) {
    const leavesTo = [...(edges.get(stateName) ?? [])].filter((target) => target !== stateName);
    const state = asObject(states[stateName]);
    // A state that ends the session, or hands the call to a person, is final by design: nothing to say about it.
    const onEnter = asObject(state?.on_enter);
    const endsSession = onEnter?.end_session === true || asObject(onEnter?.transfer) !== null;
    if (leavesTo.length === 0 && state && !endsSession) {
      out.push({
        code: 'dead_end_state',
        message: `state "${stateName}" has no way out: a session that reaches it stays there (fine for a final state)`,
        path: ['states', stateName],
        atKey: true,
      });
    }
  }

  checkPlaceholders(doc, states, settableVariables, out);
  checkLocalRules(doc, states, out);
  checkOutcomeRules(doc, states, out);
  return out;
}

/**
 * `settings.global_tools`: each names a top-level tool and may lead to a state. Returns the
 * global tools that are defined, each with its target state (null: it keeps the state).
 */
function checkGlobalTools(doc: Obj, states: Obj, sharedTools: Obj, out: SemanticProblem[]): Map<string, string | null> {
  const globals = new Map<string, string | null>();
  const declared = asObject(asObject(doc.settings)?.global_tools) ?? {};
  for (const [toolName, entry] of Object.entries(declared)) {
    const path = ['settings', 'global_tools', toolName];
    if (!Object.hasOwn(sharedTools, toolName)) {
      out.push({
        code: 'undefined_global_tool',
        message: `settings.global_tools names "${toolName}", which the flow's top-level tools do not define`,
        path,
        atKey: true,
      });
      continue;
    }
    const target = asObject(entry)?.target;
    if (typeof target === 'string' && !Object.hasOwn(states, target)) {
      out.push({
        code: 'unknown_target_state',
        message: `the global tool "${toolName}" leads to "${target}", which is not a state`,
        path: [...path, 'target'],
        atKey: false,
      });
      globals.set(toolName, null);
      continue;
    }
    globals.set(toolName, typeof target === 'string' ? target : null);
  }
  return globals;
}

function checkPlaceholders(doc: Obj, states: Obj, settable: Set<string>, out: SemanticProblem[]): void {
  const texts: Array<{ path: Array<string | number>; text: unknown }> = [
    { path: ['settings', 'base_system_prompt'], text: asObject(doc.settings)?.base_system_prompt },
  ];
  for (const [stateName, raw] of Object.entries(states)) {
    const state = asObject(raw);
    if (!state) continue;
    texts.push({ path: ['states', stateName, 'ui', 'prompt'], text: asObject(state.ui)?.prompt });
    texts.push({ path: ['states', stateName, 'agent', 'prompt'], text: asObject(state.agent)?.prompt });
    for (const [toolName, tool] of Object.entries(asObject(state.tools) ?? {})) {
      texts.push({ path: ['states', stateName, 'tools', toolName, 'speech_cue'], text: asObject(tool)?.speech_cue });
    }
    const onEnter = asObject(state.on_enter);
    texts.push({ path: ['states', stateName, 'on_enter', 'say'], text: onEnter?.say });
    for (const [variable, value] of Object.entries(asObject(onEnter?.set) ?? {})) {
      texts.push({ path: ['states', stateName, 'on_enter', 'set', variable], text: value });
    }
  }
  for (const [toolName, tool] of Object.entries(asObject(doc.tools) ?? {})) {
    texts.push({ path: ['tools', toolName, 'speech_cue'], text: asObject(tool)?.speech_cue });
  }
  texts.push({ path: ['settings', 'idle', 'reprompt'], text: asObject(asObject(doc.settings)?.idle)?.reprompt });
  texts.push({ path: ['settings', 'voicemail', 'message'], text: asObject(asObject(doc.settings)?.voicemail)?.message });
  for (const { path, text } of texts) {
    if (typeof text !== 'string') continue;
    const seen = new Map<string, number>();
    for (const { name } of findPlaceholders(text)) {
      const occurrence = seen.get(name) ?? 0;
      seen.set(name, occurrence + 1);
      if (settable.has(name)) continue;
      out.push({
        code: 'unresolved_placeholder',
        message: `no tool parameter sets {${name}}: it renders empty unless the session's context provides "${name}"`,
        path,
        atKey: false,
        needle: { text: `{${name}}`, occurrence },
      });
    }
  }
}
