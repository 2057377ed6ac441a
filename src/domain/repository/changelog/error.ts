// Errors of changelog generation. A ChangelogError becomes GitLab's 422
// {"message":"Failed to generate the changelog: <message>"} (lib/api/repositories.rb).

/** Gitlab::Changelog::Error */
export class ChangelogError extends Error {}

/** Gitlab::TemplateParser::Error: a template that cannot be parsed or evaluated. */
export class TemplateError extends Error {}
