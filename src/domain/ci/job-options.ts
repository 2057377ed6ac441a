// What a job row keeps of its CI file entry (ci_builds.options, JSON): written by pipeline creation,
// read by the runner protocol (the job payload), artifacts (upload rules) and the entities. Every list
// is already normalised (a string script became a one-element array; needs as objects).
export interface JobOptions {
  script?: string[];
  before_script?: string[];
  after_script?: string[];
  image?: { name: string; entrypoint?: string[] };
  services?: { name: string; alias?: string; entrypoint?: string[]; command?: string[] }[];
  artifacts?: {
    name?: string;
    paths?: string[];
    exclude?: string[];
    untracked?: boolean;
    /** a GitLab duration ("1 week", "3 days 4 hrs", "never") */
    expire_in?: string;
    when?: 'on_success' | 'on_failure' | 'always';
    reports?: Record<string, string[]>;
  };
  environment?: { name: string; url?: string; action?: string };
  /** absent: the job waits for every earlier stage; present (even empty): only for these jobs (DAG) */
  needs?: { job: string; artifacts: boolean; optional?: boolean }[];
  /** jobs whose artifacts are passed in (default: every job of earlier stages, or the needs) */
  dependencies?: string[];
  /** a trigger job (bridge): the child pipeline it creates */
  trigger?: { include?: { local: string }[]; strategy?: 'depend'; forward?: { yaml_variables?: boolean; pipeline_variables?: boolean } };
  /** seconds */
  timeout?: number;
  retry?: { max: number; when?: string[] };
  coverage?: string;
  start_in?: string;
  cache?: unknown[];
}

/** A variable of a job (ci_builds.yaml_variables) or a pipeline. */
export interface JobVariable {
  key: string;
  value: string;
  public?: boolean;
  masked?: boolean;
  file?: boolean;
}

export function jobOptions(raw: string): JobOptions {
  return JSON.parse(raw) as JobOptions;
}
