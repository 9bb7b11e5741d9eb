// A flow tool as the model sees it: the OpenAI chat-completions `tools` entry, whose JSON Schema
// carries each parameter's type and, when the document gives them, its description and enum.
import type { ParameterType, ToolDefinition } from './types.ts';
import { setOwn } from './own-keys.ts';

export interface OpenAIToolProperty {
  type: ParameterType;
  description?: string;
  enum?: Array<string | number | boolean>;
}

/** A tool as the OpenAI chat-completions API takes it in `tools`. */
export interface OpenAITool {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: {
      type: 'object';
      properties: Record<string, OpenAIToolProperty>;
      required: string[];
      additionalProperties: false;
    };
  };
}

export function toolSchema(name: string, definition: ToolDefinition | undefined): OpenAITool {
  const properties: Record<string, OpenAIToolProperty> = {};
  const required: string[] = [];
  for (const [parameter, declared] of Object.entries(definition?.parameters ?? {})) {
    const property: OpenAIToolProperty = { type: declared.type };
    if (declared.description !== undefined) property.description = declared.description;
    if (declared.enum !== undefined) property.enum = [...declared.enum];
    setOwn(properties, parameter, property);
    if (declared.required === true) required.push(parameter);
  }
  return {
    type: 'function',
    function: {
      name,
      description: definition?.description ?? '',
      parameters: { type: 'object', properties, required, additionalProperties: false },
    },
  };
}
