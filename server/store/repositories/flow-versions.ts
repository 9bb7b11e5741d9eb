// A flow's history (docs/flows.md#drafts): immutable numbered versions, one draft, and which version is
// published. flows.yaml_content always holds the published version's text, so whatever runs a
// flow reads what is live; publishing writes the version and moves the pointer in one
// transaction.
//
// The draft's ETag is a random token renewed on every write, never a counter: a draft
// discarded and made again cannot repeat an old tag, so an editor holding a stale one always
// hears of the conflict. Without a draft the tag names the published version (`v7`): saving on
// top of it is safe exactly while nothing was published or drafted since.

/** Who wrote a version: the studio (a signed-in person), an API key, or nobody known (migrated). */
export type VersionAuthor = { kind: 'studio' } | { kind: 'api_key'; apiKeyId: string };

export interface FlowVersionSummary {
  number: number;
  /** The document's own `version` string; null when it has none. */
  documentVersion: string | null;
  note: string;
  createdAt: number;
  createdBy: VersionAuthor | null;
}

export interface FlowVersion extends FlowVersionSummary {
  flowId: string;
  yamlContent: string;
}

export interface FlowDraft {
  flowId: string;
  yamlContent: string;
  /** The published version the draft was started from (or last saved over). */
  baseVersion: number;
  etag: string;
  updatedAt: number;
}

export interface NewVersion {
  yamlContent: string;
  documentVersion: string | null;
  note?: string;
  createdBy: VersionAuthor | null;
}

export type DraftWrite =
  | { ok: true; draft: FlowDraft }
  /** The If-Match tag is not the current one: `current` is what the caller would overwrite. */
  | { ok: false; reason: 'conflict'; currentEtag: string }
  | { ok: false; reason: 'not_found' };
export type PublishResult =
  | { ok: true; version: FlowVersion }
  | { ok: false; reason: 'conflict'; currentEtag: string }
  | { ok: false; reason: 'not_found' | 'no_draft' };

/** Every method is scoped to an account: another account's flow reads as absent. */
export interface FlowVersionsRepository {
  /** Newest first. Null when the account has no such flow. */
  list(accountId: string, flowId: string): Promise<FlowVersionSummary[] | null>;
  get(accountId: string, flowId: string, number: number): Promise<FlowVersion | null>;
  getDraft(accountId: string, flowId: string): Promise<FlowDraft | null>;
  /** The tag a write must match: the draft's, or the published version's when there is no draft. */
  currentEtag(accountId: string, flowId: string): Promise<string | null>;
  /** Creates or replaces the draft; refused when `ifMatch` is given and is not the current tag. */
  saveDraft(accountId: string, flowId: string, yamlContent: string, ifMatch?: string): Promise<DraftWrite>;
  /** True when a draft was there and is gone; a conflict when `ifMatch` is stale. */
  discardDraft(accountId: string, flowId: string, ifMatch?: string): Promise<DraftWrite | { ok: true; draft: null }>;
  /**
   * Publishes a text as version n+1. With `fromDraft`, the draft (whose text the caller
   * validated and passes back as `yamlContent`) is what is published and is removed; it must
   * still carry `expectEtag`, or the caller validated something else.
   */
  publish(accountId: string, flowId: string, version: NewVersion, options?: { fromDraft?: boolean; expectEtag?: string }): Promise<PublishResult>;
}
