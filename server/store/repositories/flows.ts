import { type NewVersion } from './flow-versions.ts';

export interface Flow {
  id: string;
  accountId: string;
  name: string;
  yamlContent: string;
  /** The studio's node positions as JSON text, or null when it lays the graph out itself. */
  layout: string | null;
  createdAt: number;
  updatedAt: number;
  /** The number of the version that sessions run; yamlContent is its text (docs/flows.md#drafts). */
  publishedVersion: number;
  /** Unpublished changes are kept in a draft (flow-versions.ts). */
  hasDraft: boolean;
}

/** A flow list item: the list never carries the YAML. */
export interface FlowSummary {
  id: string;
  name: string;
  createdAt: number;
  updatedAt: number;
}

export interface FlowChanges {
  name?: string;
  /** A new text is published as the next version: say who wrote it and its document version. */
  yamlContent?: string;
  version?: Omit<NewVersion, 'yamlContent'>;
  /** JSON text; null clears it (back to automatic layout). */
  layout?: string | null;
}

/** Every method is scoped to an account: another account's flow reads as absent. */
export interface FlowsRepository {
  /** The flow and its version 1, published, in one transaction. */
  create(input: { accountId: string; name: string; yamlContent: string; version?: Omit<NewVersion, 'yamlContent'> }): Promise<Flow>;
  /** Oldest first. */
  list(accountId: string): Promise<FlowSummary[]>;
  get(accountId: string, id: string): Promise<Flow | null>;
  /** Whether the account has this flow, without reading its document. */
  exists(accountId: string, id: string): Promise<boolean>;
  update(accountId: string, id: string, changes: FlowChanges): Promise<Flow | null>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** Drops the cached list of an account whose flow changed elsewhere (a publish); inside a write. */
  forgetList(accountId: string): void;
}
