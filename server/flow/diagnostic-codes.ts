// Every problem code the parser and validator can report, with the severity it is reported at.
// The Diagnostics table in docs/flows.md documents each one; tests hold the two together.

/** An error refuses the document (422 on upload); a warning is accepted and shown in the studio. */
export type Severity = 'error' | 'warning';

export const DIAGNOSTIC_CODES = {
  // errors: the document is refused
  document_too_large: 'error',
  // The yaml library's warnings are reported under this code too, as warnings.
  yaml_syntax: 'error',
  too_many_aliases: 'error',
  too_deeply_nested: 'error',
  missing_key: 'error',
  unknown_key: 'error',
  wrong_type: 'error',
  invalid_parameter_type: 'error',
  invalid_tool_name: 'error',
  invalid_parameter_name: 'error',
  no_states: 'error',
  unknown_initial_state: 'error',
  undefined_tool: 'error',
  transition_from_unlisted_tool: 'error',
  unknown_target_state: 'error',
  invalid_variable_name: 'error',
  invalid_value: 'error',
  out_of_range: 'error',
  invalid_http_url: 'error',
  invalid_enum: 'error',
  undefined_global_tool: 'error',
  invalid_dtmf_key: 'error',
  invalid_dtmf_digits: 'error',
  invalid_transfer_target: 'error',
  invalid_group_name: 'error',
  turn_wait_below_base: 'error',
  invalid_outcome_type: 'error',
  invalid_outcome_field: 'error',
  invalid_success_criterion: 'error',
  // warnings: accepted, shown in the studio
  unreachable_state: 'warning',
  dead_end_state: 'warning',
  unresolved_placeholder: 'warning',
  unlisted_tool: 'warning',
  duplicate_tool_listing: 'warning',
  version_not_semver: 'warning',
  global_tool_shadowed: 'warning',
  interruptible_without_speech: 'warning',
  result_transition_without_http: 'warning',
  credential_in_header: 'warning',
  // Pipecat Flows import and export (server/flow/pipecat): what does not map, said per part.
  pipecat_not_a_flow_config: 'error',
  pipecat_unknown_initial_node: 'warning',
  pipecat_unmapped_key: 'warning',
  pipecat_handler_not_run: 'warning',
  pipecat_runtime_transition: 'warning',
  pipecat_unknown_target: 'warning',
  pipecat_unsupported_action: 'warning',
  pipecat_action_moved: 'warning',
  pipecat_message_adapted: 'warning',
  pipecat_parameter_adapted: 'warning',
  pipecat_renamed: 'warning',
  pipecat_context_summary: 'warning',
  pipecat_no_equivalent: 'warning',
  pipecat_global_tool_copied: 'warning',
  pipecat_placeholder_kept: 'warning',
  // The declarative YAML FlowConfig (Pipecat Flows 1.x) only.
  pipecat_format_guessed: 'warning',
  pipecat_invalid_value: 'warning',
  pipecat_function_without_schema: 'warning',
  pipecat_companion_invalid: 'warning',
  pipecat_branch_adapted: 'warning',
  pipecat_global_function_copied: 'warning',
} as const satisfies Record<string, Severity>;

export type DiagnosticCode = keyof typeof DIAGNOSTIC_CODES;
