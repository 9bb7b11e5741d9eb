import { z } from 'zod';
import { CreateFlowBody, flowName as name, flowYamlContent as yamlContent } from '../../jobs/flow-bodies.ts';

export { CreateFlowBody };
const MAX_LAID_OUT_STATES = 2_000;
const coordinate = z.number().finite().min(-1e6).max(1e6);
/**
 * Where the studio draws each state: `{positions: {state: {x, y}}}`. Kept beside the YAML (never
 * in it) and not checked against the states: a renamed state simply falls back to auto-layout.
 */
export const FlowLayout = z
  .object({
    positions: z
      .record(z.string().max(200), z.object({ x: coordinate, y: coordinate }).strict())
      .refine((p) => Object.keys(p).length <= MAX_LAID_OUT_STATES, { message: `at most ${MAX_LAID_OUT_STATES} positions` }),
  })
  .strict();
export type FlowLayout = z.infer<typeof FlowLayout>;

export const UpdateFlowBody = z
  .object({ name: name.optional(), yaml_content: yamlContent.optional(), layout: FlowLayout.nullable().optional() })
  .refine((b) => b.name !== undefined || b.yaml_content !== undefined || b.layout !== undefined, { message: 'send name, yaml_content, layout or any of them' });
/** The JSON form of a flow document; its content is checked by the flow validator, not here. */
export const FlowJsonBody = z.record(z.string(), z.unknown(), { error: 'must be the flow document as a JSON object' });
