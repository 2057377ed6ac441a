// The rules of an issue that every shape of it shares (the API entities, the hooks, the web pages).

/** Issue web URL (Gitlab::UrlBuilder): incidents live under /-/issues too. */
export function issueWebUrl(externalUrl: string, fullPath: string, iid: number): string {
  return `${externalUrl}/${fullPath}/-/issues/${iid}`;
}

/** Issue::TYPES the API accepts for issue_type (test_case, task and the EE types aside). */
export const ISSUE_TYPES = ['issue', 'incident'] as const;
export type IssueType = (typeof ISSUE_TYPES)[number];

/** Issue#title and #description limits (Issuable: title 255, description 1,048,576 characters). */
export const TITLE_MAX = 255;
export const DESCRIPTION_MAX = 1_048_576;
