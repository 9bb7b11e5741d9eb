import { z } from 'zod';

const name = z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters');
const yamlContent = z.string({ error: 'must be the YAML document as a string' });

export const CreateFlowBody = z.object({ name, yaml_content: yamlContent });
export const UpdateFlowBody = z
  .object({ name: name.optional(), yaml_content: yamlContent.optional() })
  .refine((b) => b.name !== undefined || b.yaml_content !== undefined, { message: 'send name, yaml_content or both' });
/** The JSON form of a flow document; its content is checked by the flow validator, not here. */
export const FlowJsonBody = z.record(z.string(), z.unknown(), { error: 'must be the flow document as a JSON object' });
