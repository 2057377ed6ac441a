// What the translation write services take: one object, so a new service is one line in the container,
// and `writes` lets one service call another (built together, filled in before the first request).
import type { Config } from '../../config.ts';
import type { Outbound } from '../../lib/outbound.ts';
import type { FeatureDeps } from '../deps.ts';
import type { MergeRequestsService } from '../merge-requests/merge-requests.service.ts';
import type { ComponentsService } from './components/components.service.ts';
import type { ForgeFollow } from './components/follow.ts';
import type { ComponentVcs } from './components/vcs.ts';
import type { TranslationFiles } from './files/files.service.ts';
import type { TranslationPermissions } from './permissions.ts';
import type { TranslationQueries } from './queries.ts';
import type { ComponentRepository } from './repository/component-repository.ts';
import type { TranslationsService } from './translations/translations.service.ts';
import type { SuggestionsService } from './units/suggestions.ts';
import type { UnitEdits } from './units/edits.ts';

export interface TranslationWrites {
  /** who may do what (Weblate's permission names), following the forge for components of its projects */
  permissions: TranslationPermissions;
  /** unit edits: targets and states, change records, statistics, pending until committed */
  edits: UnitEdits;
  /** suggestions and comments on units */
  suggestions: SuggestionsService;
  /** adding and removing a translation (language) of a component */
  translations: TranslationsService;
  /** translation files: download (pending edits included, conversions, zip) and upload */
  files: TranslationFiles;
  /** a component's repository: commit, push, pull, reset, cleanup, status */
  repository: ComponentRepository;
  /** components that follow a project of this server: rescanned after every push to their branch */
  follow: ForgeFollow;
}

export interface TranslationDeps extends FeatureDeps {
  config: Config;
  outbound: Outbound;
  vcs: ComponentVcs;
  components: ComponentsService;
  queries: TranslationQueries;
  writes: TranslationWrites;
  /** the forge's merge requests (a component with vcs=gitlab on a project of this server opens one on push) */
  mergeRequests?: MergeRequestsService;
}
