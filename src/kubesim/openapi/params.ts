/**
 * The request parameters the apiserver declares on its operations, with its wording (shortened).
 * kubectl reads two of them from the documents: `fieldValidation` on a kind's PATCH operation
 * means "this server validates fields itself", so kubectl sends `fieldValidation=Strict` instead
 * of validating client-side; `dryRun` there means `--dry-run=server` works.
 */

export interface ParamSpec {
  in: 'path' | 'query';
  type: 'string' | 'integer' | 'boolean';
  description: string;
  required?: boolean;
}

export const PARAMS = {
  name: { in: 'path', type: 'string', required: true, description: 'name of the {kind}' },
  namespace: {
    in: 'path',
    type: 'string',
    required: true,
    description: 'object name and auth scope, such as for teams and projects',
  },
  pretty: {
    in: 'query',
    type: 'string',
    description:
      "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).",
  },
  dryRun: {
    in: 'query',
    type: 'string',
    description:
      'When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed',
  },
  fieldManager: {
    in: 'query',
    type: 'string',
    description:
      'fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters. This field is required for apply requests (application/apply-patch) but optional for non-apply patch types.',
  },
  fieldValidation: {
    in: 'query',
    type: 'string',
    description:
      'fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: ignores unknown fields silently. - Warn: sends a warning via the standard warning response header for each unknown field. - Strict: fails the request with a BadRequest error if any unknown fields would be dropped.',
  },
  force: {
    in: 'query',
    type: 'boolean',
    description:
      'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.',
  },
  allowWatchBookmarks: {
    in: 'query',
    type: 'boolean',
    description:
      'allowWatchBookmarks requests watch events with type "BOOKMARK". Servers that do not implement bookmarks may ignore this flag.',
  },
  continue: {
    in: 'query',
    type: 'string',
    description:
      'The continue option should be set when retrieving more results from the server, with the value of metadata.continue of the previous page.',
  },
  fieldSelector: {
    in: 'query',
    type: 'string',
    description:
      'A selector to restrict the list of returned objects by their fields. Defaults to everything.',
  },
  labelSelector: {
    in: 'query',
    type: 'string',
    description:
      'A selector to restrict the list of returned objects by their labels. Defaults to everything.',
  },
  limit: {
    in: 'query',
    type: 'integer',
    description:
      'limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata.',
  },
  resourceVersion: {
    in: 'query',
    type: 'string',
    description:
      'resourceVersion sets a constraint on what resource versions a request may be served from. Defaults to unset.',
  },
  resourceVersionMatch: {
    in: 'query',
    type: 'string',
    description:
      'resourceVersionMatch determines how resourceVersion is applied to list calls. Defaults to unset.',
  },
  sendInitialEvents: {
    in: 'query',
    type: 'boolean',
    description:
      'With `sendInitialEvents=true`, a watch starts with synthetic events for the current state, then a bookmark annotated "k8s.io/initial-events-end".',
  },
  timeoutSeconds: {
    in: 'query',
    type: 'integer',
    description:
      'Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity.',
  },
  watch: {
    in: 'query',
    type: 'boolean',
    description:
      'Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.',
  },
  gracePeriodSeconds: {
    in: 'query',
    type: 'integer',
    description: 'The duration in seconds before the object should be deleted. kubesim deletes at once.',
  },
  propagationPolicy: {
    in: 'query',
    type: 'string',
    description:
      "Whether and how garbage collection will be performed: 'Orphan', 'Background' or 'Foreground'.",
  },
} satisfies Record<string, ParamSpec>;

export type ParamName = keyof typeof PARAMS;

export const LIST_PARAMS: ParamName[] = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'pretty',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
];
export const CREATE_PARAMS: ParamName[] = ['pretty', 'dryRun', 'fieldManager', 'fieldValidation'];
export const PATCH_PARAMS: ParamName[] = ['pretty', 'dryRun', 'fieldManager', 'fieldValidation', 'force'];
/** kubesim ignores dryRun on delete (docs/kubesim.md), so it does not declare it there. */
export const DELETE_PARAMS: ParamName[] = ['pretty', 'gracePeriodSeconds', 'propagationPolicy'];
