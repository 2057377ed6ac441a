// The default commit message templates of a translation component (Weblate's, naming this server):
// `{{ language_name }}`, `{{ project_name }}`, `{{ component_name }}`, `{{ stats.translated }}` … are filled in
// when a commit is made (component-repository.ts). Migration 019 made them the columns' defaults from
// its own frozen copy: changing one here does not change the column's default (a new migration would).
export const DEFAULT_COMMIT_MESSAGE =
  'Translated using Hearth ({{ language_name }})\n\nCurrently translated at {{ stats.translated_percent }}% ({{ stats.translated }} of {{ stats.all }} strings)\n\nTranslation: {{ project_name }}/{{ component_name }}\nTranslate-URL: {{ url }}';
export const DEFAULT_ADD_MESSAGE = 'Added translation using Hearth ({{ language_name }})\n\n';
export const DEFAULT_DELETE_MESSAGE = 'Deleted translation using Hearth ({{ language_name }})\n\n';
export const DEFAULT_MERGE_MESSAGE = "Merge branch '{{ component_remote_branch }}' into Hearth.\n\n";
