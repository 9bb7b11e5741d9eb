// The body of POST /v1/flows, here rather than beside its route (api/flows/schemas.ts takes it
// from here) because a flow worker checks it: the body is decoded, parsed and checked there, not
// on the thread that paces audio (flow-job.ts, 'create_flow').
import { z } from 'zod';

export const flowName = z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters');
export const flowYamlContent = z.string({ error: 'must be the YAML document as a string' });

export const CreateFlowBody = z.object({ name: flowName, yaml_content: flowYamlContent });
export type CreateFlowBody = z.infer<typeof CreateFlowBody>;
