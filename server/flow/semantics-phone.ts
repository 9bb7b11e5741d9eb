// Checks of the keys a phone call uses: a state's keypad (`dtmf`), an on-entry `transfer`, and a
// tool's `send_dtmf`. The states they lead to are returned to semantics.ts, where they count as
// transitions (reachability, dead ends) like a tool's; the rest is checked here.
import type { SemanticProblem } from './semantics.ts';
import { PARAMETER_NAME_PATTERN } from './schema.ts';
import { toolsWithPaths } from './semantics-local.ts';

type Obj = Record<string, unknown>;

function asObject(value: unknown): Obj | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Obj) : null;
}

/** What a tool may press: the keypad, the four extra DTMF tones A-D, and `w` for a half-second pause. */
export const SEND_DTMF_PATTERN = /^[0-9*#A-Dw]{1,64}$/;

/** A phone number as carriers take it: +, country code, up to 15 digits in all. */
export const E164_PATTERN = /^\+[1-9][0-9]{6,14}$/;
/** `sip:user@host` (with an optional port and parameters), the address a SIP endpoint answers at. */
export const SIP_URI_PATTERN = /^sips?:[^@\s:;]+@[A-Za-z0-9.-]+(:[0-9]{1,5})?(;[^\s]*)?$/;

export function transferTargetProblem(to: string): string | null {
  if (E164_PATTERN.test(to) || SIP_URI_PATTERN.test(to)) return null;
  if (/^[0-9 ()+.-]+$/.test(to)) return `"${to}" is not a phone number in E.164 form: write + and the country code, digits only, like +15551234567`;
  return `"${to}" is neither a phone number in E.164 form (+15551234567) nor a SIP address (sip:desk@example.com)`;
}

/** Checks the phone keys of every state and tool; returns each state's keypad and transfer targets. */
export function checkPhoneRules(doc: Obj, states: Obj, out: SemanticProblem[]): Map<string, Set<string>> {
  const targets = new Map<string, Set<string>>();
  const stateNames = Object.keys(states);
  const knownState = (name: unknown, path: Array<string | number>, what: string, from: Set<string>) => {
    if (typeof name !== 'string') return;
    if (Object.hasOwn(states, name)) from.add(name);
    else out.push({ code: 'unknown_target_state', message: `${what} leads to "${name}", which is not a state (${stateNames.join(', ')})`, path, atKey: false });
  };

  for (const [stateName, raw] of Object.entries(states)) {
    const state = asObject(raw);
    const from = new Set<string>();
    targets.set(stateName, from);
    if (!state) continue;
    const path = ['states', stateName];

    const dtmf = asObject(state.dtmf);
    for (const [key, target] of Object.entries(asObject(dtmf?.keys) ?? {})) {
      knownState(target, [...path, 'dtmf', 'keys', key], `the key ${key} in state "${stateName}"`, from);
    }
    const collect = asObject(dtmf?.collect);
    if (collect) {
      knownState(collect.then, [...path, 'dtmf', 'collect', 'then'], `collecting digits in state "${stateName}"`, from);
      if (typeof collect.into === 'string' && !PARAMETER_NAME_PATTERN.test(collect.into)) {
        out.push({
          code: 'invalid_variable_name',
          message: `collect.into "${collect.into}" is not a valid variable name: a letter or _ followed by letters, digits or _ (it is used as a {placeholder})`,
          path: [...path, 'dtmf', 'collect', 'into'],
          atKey: false,
        });
      }
    }

    const transfer = asObject(asObject(state.on_enter)?.transfer);
    if (transfer && asObject(state.on_enter)?.end_session === true) {
      out.push({ code: 'invalid_value', message: `state "${stateName}" both ends the call and transfers it: keep one`, path: [...path, 'on_enter', 'end_session'], atKey: true });
    }
    if (transfer) checkTransfer(transfer, [...path, 'on_enter', 'transfer'], stateName, out, (target) => knownState(target, [...path, 'on_enter', 'transfer', 'on_failed'], `the failed transfer in state "${stateName}"`, from));
  }

  for (const { path, tool } of toolsWithPaths(doc)) {
    const digits = tool.send_dtmf;
    if (typeof digits === 'string' && !SEND_DTMF_PATTERN.test(digits)) {
      out.push({
        code: 'invalid_dtmf_digits',
        message: `send_dtmf "${digits}" must be 1 to 64 of 0-9, *, #, A-D, and w (a half-second pause)`,
        path: [...path, 'send_dtmf'],
        atKey: false,
      });
    }
    if (digits !== undefined && tool.http !== undefined) {
      out.push({ code: 'invalid_value', message: 'a tool does one action: send_dtmf or http, not both', path: [...path, 'send_dtmf'], atKey: true });
    }
  }
  return targets;
}

function checkTransfer(transfer: Obj, path: Array<string | number>, stateName: string, out: SemanticProblem[], onFailed: (target: unknown) => void): void {
  if (typeof transfer.to === 'string') {
    const problem = transferTargetProblem(transfer.to);
    if (problem) out.push({ code: 'invalid_transfer_target', message: `transfer.to ${problem}`, path: [...path, 'to'], atKey: false });
  }
  const warm = transfer.mode === 'warm';
  // A warm transfer waits for the person to answer: the flow must say where the caller goes when
  // nobody does, or the caller would be left on hold with no one.
  if (warm && transfer.on_failed === undefined) {
    out.push({ code: 'missing_key', message: `the warm transfer in state "${stateName}" needs on_failed: the state the caller returns to when the person does not answer`, path, atKey: true });
  }
  if (!warm && transfer.summary !== undefined) {
    out.push({ code: 'invalid_value', message: 'summary is told to the person in a warm transfer only: add mode: warm, or remove summary', path: [...path, 'summary'], atKey: true });
  }
  if (!warm && transfer.timeout_seconds !== undefined) {
    out.push({ code: 'invalid_value', message: 'timeout_seconds is how long a warm transfer rings the person: add mode: warm, or remove timeout_seconds', path: [...path, 'timeout_seconds'], atKey: true });
  }
  onFailed(transfer.on_failed);
}
